/// @file main.cu
/// @brief Chapter 13's program: the CPU reference, the Problem, the check sizes, the
///        cluster-size query, the variant registry and main. The lesson is in kernels.cuh and
///        README.md; broken.cuh holds the negative.
//
// What the program does: for each variant, poison the output, launch, compare every word with
// the CPU broadcast add, then time it (run_chapter, common/harness.cuh).
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "kernels.cuh"
#include "broken.cuh"
#include "common/bounded_wait.cuh"
#include "common/device_buffer.cuh"
#include "common/harness.cuh"
#include "common/launch.cuh"

namespace ch13 {

inline std::vector<std::uint32_t> reference_broadcast_add(const std::vector<std::uint32_t>& in,
                                                          const std::vector<std::uint32_t>& table) {
  std::vector<std::uint32_t> out(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) out[i] = in[i] + table[i % ROW_WORDS];
  return out;
}

// Check sizes (bytes of `in`): part of one row (one cluster, 3 idle blocks); a row minus 16 B;
// rows + a ragged tail that ends inside a tile; more rows than one cluster; many clusters.
// The largest feeds the harness's lap check, which caps the grid at one cluster (two blocks,
// rounded to whole clusters of 4): 8 MiB is 128 rows = 32 row groups, so each block walks
// 32 x 8 = 256 ring tiles, 64 laps of the 4-slot ring.
inline const std::vector<std::uint64_t> kCheckSizes = {16, 65536 - 16, 5 * 65536 + 8192 + 48,
                                                       9 * 65536 + 16, 8u << 20};

// Laps of the ring each block makes at `size` bytes when the grid is `clusters` clusters.
inline std::uint64_t ring_laps(std::uint64_t size, int clusters) {
  const std::uint64_t rows = (size + ROW_WORDS * 4 - 1) / (ROW_WORDS * 4);
  const std::uint64_t groups = (rows + CLUSTER - 1) / CLUSTER;
  return groups / clusters * TILES_PER_ROW / STAGES;
}

// --size: bytes of `in` (and of `out`), a multiple of 16; rows of 64 KiB, the last one ragged.
struct Problem {
  explicit Problem(const tut::RunConfig& cfg)
      : cfg(cfg), n_words(cfg.size / 4), d_in(n_words), d_out(n_words), d_table(ROW_WORDS) {
    h_in.resize(n_words);
    tut::fill_unique_words(h_in.data(), n_words, cfg.seed);
    d_in.upload(h_in);
    h_table.resize(ROW_WORDS);
    tut::fill_unique_words(h_table.data(), ROW_WORDS, cfg.seed ^ 0x7ab1e);
    d_table.upload(h_table);
    want = reference_broadcast_add(h_in, h_table);  // every Problem is checked before it is timed
  }
  void poison(cudaStream_t s) {
    d_out.poison(s);
    d_error.clear(s);
  }
  tut::VerifyResult verify(cudaStream_t s, int /*reference*/) {
    return tut::compare_words_and_error(s, d_out, want, d_error);
  }
  // Bytes of in + out; the table's traffic (per block, or per cluster) is what ncu shows.
  double work() const { return 2.0 * static_cast<double>(cfg.size); }
  std::string describe() const {
    return tut::format_bytes(double(cfg.size)) + " per buffer, " +
           std::to_string(cluster_grid(n_words)) + " blocks";
  }
  BroadcastArgs args() {
    return {d_in.data(), d_table.data(), d_out.data(), n_words, d_error.data()};
  }
  // A <<<>>> launch (cluster: the kernel's __cluster_dims__, 1 for none) or a clustered one.
  void plain(BroadcastKernel kernel, int cluster, cudaStream_t s) {
    launch_plain(kernel, cluster, args(), s);
  }
  void clustered(BroadcastKernel kernel, cudaStream_t s) { launch_clustered(kernel, args(), s); }

  tut::RunConfig cfg;
  std::size_t n_words;
  tut::DeviceBuffer<std::uint32_t> d_in, d_out, d_table;
  tut::ErrorWord d_error;
  std::vector<std::uint32_t> h_in, h_table, want;
};


/// The largest cluster the GPU can co-schedule for `kernel` with this block size and shared
/// memory (it depends on both, and on the GPU's GPC layout: not always 16, not always 8).
inline int max_cluster_size(BroadcastKernel kernel, bool allow_non_portable) {
  tut::opt_in_dynamic_smem(kernel, SMEM_BYTES);  // 64 KiB: the query needs the opt-in
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed,
                                  allow_non_portable ? 1 : 0));
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(16 * CLUSTER);
  config.blockDim = dim3(THREADS);
  config.dynamicSmemBytes = SMEM_BYTES;
  int size = 0;
  CUDA_CHECK(cudaOccupancyMaxPotentialClusterSize(&size, kernel, &config));
  return size;
}

// The variant registry, in reading order.
inline std::vector<tut::Variant<Problem>> variants() {
  tut::VariantList<Problem> v;
  v.add("v0_bulk", "v0 bulk, no cluster",
        "baseline (chapter 11's bulk copy): each block loads its row tile and every table tile",
        [](Problem& p, cudaStream_t s) { p.plain(broadcast_v0_bulk_kernel, 1, s); });
  v.add("v1_dsmem_pull", "v1 cluster4 DSMEM pull",
        "__cluster_dims__(4): rank j%4 loads table tile j; peers read it via map_shared_rank",
        [](Problem& p, cudaStream_t s) { p.plain(broadcast_v1_dsmem_pull_kernel, CLUSTER, s); });
  v.add("v2_st_async", "v2 cluster4 st.async push",
        "cudaLaunchKernelEx: the loading block pushes the tile to peers with st.async (PTX)",
        [](Problem& p, cudaStream_t s) { p.clustered(broadcast_v2_st_async_kernel, s); });
  v.add("v3_multicast_ptx", "v3 cluster4 multicast PTX",
        "cudaLaunchKernelEx: one cp.async.bulk .multicast::cluster per tile, mask 0b1111",
        [](Problem& p, cudaStream_t s) { p.clustered(broadcast_v3_multicast_ptx_kernel, s); })
      .arch_specific = {90};  // its multicast is compiled for sm_90a only
  v.add("v4_multicast_cccl", "v4 cluster4 multicast ptx::",
        "__cluster_dims__(4): the same multicast through cuda::ptx::cp_async_bulk(..., mask)",
        [](Problem& p, cudaStream_t s) {
          p.plain(broadcast_v4_multicast_cccl_kernel, CLUSTER, s);
        })
      .arch_specific = {90};  // CCCL's multicast overload: compiled for sm_90a only here
  v.add("v5_dsmem_push", "v5 cluster4 DSMEM push",
        "cudaLaunchKernelEx: the loading block stores the tile into peers via map_shared_rank",
        [](Problem& p, cudaStream_t s) { p.clustered(broadcast_v5_dsmem_push_kernel, s); });
  add_negatives(v);  // broken.cuh
  return v.list;
}

// The chapter main() hands to tut::run_chapter(): name, heading, registry, sizes, options.
// The lesson (the tour's pair): one multicast per table tile for a cluster of 4, against
// every block loading the table itself (both one block per row, the same grid).
inline tut::Chapter<Problem> chapter() {
  tut::Chapter<Problem> ch("ch13_clusters_multicast", variants(), "v3_multicast_ptx", "v0_bulk",
      "Chapter 13: clusters, distributed shared memory, TMA multicast");
  ch.min_cc_major = 9;  // clusters, DSMEM, st.async, multicast: sm_90
  tut::set_buffer_sizes(ch, 16, "; rows of 64 KiB");  // in and out; default 1 GiB
  ch.check_sizes = kCheckSizes;                  // why these: above
  ch.after_table = [](const tut::RunConfig&, cudaStream_t, const std::string&) {
    std::printf("largest cluster for the multicast kernel (256 threads, 64 KiB smem): %d "
                "portable, %d with cudaFuncAttributeNonPortableClusterSizeAllowed\n",
                max_cluster_size(broadcast_v3_multicast_ptx_kernel, false),
                max_cluster_size(broadcast_v3_multicast_ptx_kernel, true));
    return true;
  };
  return ch;
}

}

// A test includes this file with TUTORIAL_CHAPTER_TEST defined, for the Problem and the registry.
#ifndef TUTORIAL_CHAPTER_TEST
int main(int argc, char** argv) { return tut::run_chapter(argc, argv, ch13::chapter()); }
#endif  // TUTORIAL_CHAPTER_TEST
