/// @file launch.cuh
/// @brief Grid sizing for the persistent kernels of this tutorial.
///
/// Most chapters launch a persistent grid: a fixed number of blocks per SM, each looping over
/// many tiles, instead of one block per tile. That makes "blocks per SM" a knob the lessons can
/// turn: at full occupancy the warp scheduler hides latency by switching blocks; at one block
/// per SM only the asynchronous copies in flight can hide it.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>

#include "cuda_check.cuh"

namespace tut {

/// @brief Dynamic shared memory a kernel may use without opting in (the default limit).
inline constexpr std::size_t kDefaultDynamicSmemLimit = 48 * 1024;

/// @brief Resident blocks per SM for @p kernel at @p threads per block and @p dynamic_smem
///        bytes of dynamic shared memory (what "full occupancy" means for a grid size).
/// @note  Above 48 KiB of dynamic shared memory the answer is 0 until the kernel has opted in
///        (cudaFuncAttributeMaxDynamicSharedMemorySize); persistent_grid() does that first.
template <class Kernel>
int max_blocks_per_sm(Kernel kernel, int threads, std::size_t dynamic_smem = 0) {
  int blocks = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, dynamic_smem));
  return blocks;
}

/// @brief Blocks for a persistent grid of @p kernel: @p blocks_per_sm per SM, or as many as fit
///        when it is 0 or more than fit (full occupancy), times @p sm_count.
/// @param kernel        the kernel to be launched
/// @param threads       its block size
/// @param sm_count      SMs on the device (DeviceInfo::sm_count)
/// @param blocks_per_sm wanted resident blocks per SM; 0 = full occupancy
/// @param dynamic_smem  dynamic shared memory per block in bytes; above 48 KiB the kernel is
///                      opted in here, since the occupancy query needs that first
/// @return the grid size; exits 1 with a message when not even one block fits on an SM
template <class Kernel>
unsigned persistent_grid(Kernel kernel, int threads, int sm_count, int blocks_per_sm = 0,
                         std::size_t dynamic_smem = 0) {
  if (dynamic_smem > kDefaultDynamicSmemLimit)
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(dynamic_smem)));
  const int fit = max_blocks_per_sm(kernel, threads, dynamic_smem);
  if (fit < 1) {
    std::fprintf(stderr,
                 "error: not one block of %d threads with %zu B of dynamic shared memory fits on "
                 "an SM of this GPU\n",
                 threads, dynamic_smem);
    std::exit(kExitCudaError);
  }
  const int per_sm = blocks_per_sm > 0 && blocks_per_sm < fit ? blocks_per_sm : fit;
  return static_cast<unsigned>(per_sm * sm_count);
}

}  // namespace tut
