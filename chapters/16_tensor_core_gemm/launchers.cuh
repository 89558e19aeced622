// Chapter 16: launch functions. Each takes device pointers and sizes (GemmArgs), the tensor
// maps its kernel reads, the stream and, for the persistent step, the SM count. Every grid
// goes through tut::apply_grid_cap, so the harness's lap check can run any kernel on two
// blocks (one cluster), where each ring wraps around many times.
#pragma once

#include <algorithm>
#include <map>

#include "common/cuda_check.cuh"
#include "common/launch.cuh"
#include "kernels.cuh"

namespace ch16 {

/// One block (or cluster) per output tile (pair), capped for the lap check.
inline unsigned tile_grid(int tiles, unsigned cluster = 1) {
  const unsigned grid = tut::apply_grid_cap(static_cast<unsigned>(tiles), cluster);
  tut::record_grid(grid, 1);
  return grid;
}

inline void launch_step1(const GemmArgs& g, cudaStream_t s) {
  using namespace step1;
  tut::opt_in_dynamic_smem(gemm_step1_mma_sync_kernel, SMEM_BYTES);
  const int tiles = ceil_div(g.M, BM) * ceil_div(g.N, BN);
  gemm_step1_mma_sync_kernel<<<tile_grid(tiles), THREADS, SMEM_BYTES, s>>>(g);
}

template <class Kernel>
void launch_step2_kernel(Kernel kernel, const CUtensorMap& a64, const CUtensorMap& b256,
                         const GemmArgs& g, cudaStream_t s) {
  using namespace step2;
  tut::opt_in_dynamic_smem(kernel, SMEM_BYTES);
  const int tiles = ceil_div(g.M, BM) * ceil_div(g.N, BN);
  kernel<<<tile_grid(tiles), THREADS, SMEM_BYTES, s>>>(a64, b256, g);
}

/// Step 3 and its negatives; `trace...` is the timeline argument of step 3's kernel
/// (tut::TraceOff for the timed runs, tut::TraceOn for --timeline), empty for the negatives.
template <class Kernel, class... Trace>
void launch_step3_kernel(Kernel kernel, const CUtensorMap& a128, const CUtensorMap& b256,
                         const GemmArgs& g, cudaStream_t s, Trace... trace) {
  using namespace ws;
  tut::opt_in_dynamic_smem(kernel, SMEM_BYTES);
  const int tiles = ceil_div(g.M, BM) * ceil_div(g.N, BN);
  kernel<<<tile_grid(tiles), THREADS, SMEM_BYTES, s>>>(a128, b256, g, trace...);
}

inline void launch_step4(const CUtensorMap& a128, const CUtensorMap& b128, const GemmArgs& g,
                         cudaStream_t s) {
  using namespace cl;
  tut::opt_in_dynamic_smem(gemm_step4_cluster_kernel, SMEM_BYTES);
  const int pairs = ceil_div(ceil_div(g.M, BM), CLUSTER) * ceil_div(g.N, BN);
  gemm_step4_cluster_kernel<<<tile_grid(pairs * CLUSTER, CLUSTER), THREADS, SMEM_BYTES, s>>>(
      a128, b128, g);
}

/// How many 2-block clusters of `kernel` can be resident at once (a cluster needs two free
/// SMs of one GPC, so on a GPU with odd-sized GPCs this is less than SMs / 2). Queried once.
template <class Kernel>
int max_active_clusters(Kernel kernel, int threads, int smem) {
  static std::map<const void*, int> known;
  const auto it = known.find(reinterpret_cast<const void*>(kernel));
  if (it != known.end()) return it->second;
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(cl::CLUSTER, 1, 1);
  config.blockDim = dim3(threads, 1, 1);
  config.dynamicSmemBytes = smem;
  int clusters = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveClusters(&clusters, kernel, &config));
  known[reinterpret_cast<const void*>(kernel)] = clusters;
  return clusters;
}

/// Persistent: as many clusters as can be resident at once, never more than the tile pairs.
template <class Kernel>
void launch_step5_kernel(Kernel kernel, const CUtensorMap& a128, const CUtensorMap& b128,
                         const CUtensorMap& c64, const GemmArgs& g, int sm_count,
                         cudaStream_t s) {
  using namespace cl;
  tut::opt_in_dynamic_smem(kernel, ps::SMEM_BYTES);
  const int pairs = ceil_div(ceil_div(g.M, BM), CLUSTER) * ceil_div(g.N, BN);
  const int resident = std::max(1, std::min(max_active_clusters(kernel, THREADS, ps::SMEM_BYTES),
                                            sm_count / CLUSTER));
  const int blocks = std::min(resident, pairs) * CLUSTER;
  const unsigned grid = tut::apply_grid_cap(static_cast<unsigned>(blocks), CLUSTER);
  tut::record_grid(grid, 1);
  kernel<<<grid, THREADS, ps::SMEM_BYTES, s>>>(a128, b128, c64, g);
}

}  // namespace ch16
