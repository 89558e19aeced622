// EXERCISE copy of ../main.cu (tools/make_exercise.py); edit kernels.cuh, not this.
// Chapter 13 driver: builds the chapter description and hands it to the harness.
// The lesson is in kernels.cuh and README.md.
#include "kernels.cuh"

int main(int argc, char** argv) {
  tut::Chapter<ch13::Problem> ch;
  ch.id = "ch13_clusters_multicast";
  ch.title = "Chapter 13: clusters, distributed shared memory, TMA multicast";
  ch.min_cc_major = 9;  // clusters, DSMEM, st.async, multicast: sm_90
  ch.min_cc_minor = 0;
  ch.size_help = "bytes of the input (and output), a multiple of 16; rows of 64 KiB (default 1G)";
  ch.size_multiple = 16;
  ch.max_size = 16ull << 30;
  ch.default_size = [](const tut::DeviceSummary&) { return std::uint64_t{1} << 30; };
  // Part of one row (one cluster, 3 idle blocks); a row minus 16 B; rows + a ragged tail
  // that ends inside a tile; more rows than one cluster; many clusters.
  ch.check_sizes = {16, 65536 - 16, 5 * 65536 + 8192 + 48, 9 * 65536 + 16, 8u << 20};
  ch.device_bytes = [](std::uint64_t size) { return 4 * size + (std::size_t{64} << 20); };
  ch.variants = ch13::variants();
  ch.after_table = [](const tut::RunConfig&, cudaStream_t, const std::string&) {
    std::printf("largest cluster for the multicast kernel (256 threads, 64 KiB smem): %d "
                "portable, %d with cudaFuncAttributeNonPortableClusterSizeAllowed\n",
                ch13::max_cluster_size(ch13::broadcast_v3_multicast_ptx_kernel, false),
                ch13::max_cluster_size(ch13::broadcast_v3_multicast_ptx_kernel, true));
    return true;
  };
  return tut::run_chapter(argc, argv, ch);
}
