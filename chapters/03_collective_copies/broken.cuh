/// @file broken.cuh
/// @brief Chapter 03's deliberately broken variant: v9, a copy of stream_v1_cg_kernel
///        (kernels.cuh) whose collective call only warp 0 makes, marked // BUG:. It must FAIL
///        under --check-only. main.cu calls add_negatives() at the end of its registry.
#pragma once

#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>
#include <cuda_runtime.h>

#include <cstddef>

#include "common/harness.cuh"
#include "common/workload_stencil_stream.cuh"
#include "common/workload_stencil_stream_kernels.cuh"
#include "kernels.cuh"

namespace ch03 {

// ---------------------------------------------------------------------------------------------
// v9 (negative): only warp 0 makes the collective call
// ---------------------------------------------------------------------------------------------
// "One warp is enough to start a copy" - but cg::memcpy_async(block, ...) is a loop over block
// ranks stepping by block.size(); called by ranks 0..31 only, it copies float4 0..31 of each
// tile and nothing else. The tile is filled with a NaN first (a block.sync() orders the fill
// before the copy), so the 224 uncopied float4 of every full tile are wrong, every time.
// (cuda::memcpy_async(block, ...) of v2 would hide this bug on sm_90, where rank 0 issues the
// whole bulk copy, and show it on sm_80: the rule holds even where the symptom does not.)
__global__ void stream_v9_one_warp_kernel(const float4* __restrict__ d_in,
                                          float4* __restrict__ d_out, std::size_t n_vecs) {
  __shared__ alignas(16) float4 s_tile[kStreamTileVecs];
  const cg::thread_block block = cg::this_thread_block();
  const int tid = threadIdx.x;
  const float nan = __int_as_float(0x7fffffff);
  const std::size_t num_tiles = (n_vecs + kStreamTileVecs - 1) / kStreamTileVecs;
  for (std::size_t tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
    const std::size_t base = tile * kStreamTileVecs;
    const int count = stream_tile_count(n_vecs, base);
    s_tile[tid] = make_float4(nan, nan, nan, nan);
    block.sync();
    if (tid < 32) cg::memcpy_async(block, s_tile, d_in + base, sizeof(float4) * count);  // BUG
    cg::wait(block);
    if (tid < count) d_out[base + tid] = s_tile[count - 1 - tid];
    block.sync();
  }
}

/// @brief Registers v9 (negative) in the chapter's variant list.
inline void add_negatives(tut::VariantList<Problem>& v) {
  tut::Variant<Problem>& v9 = v.add(
      "v9_one_warp", "v9 BROKEN: one warp calls",
      "negative: only warp 0 makes the collective call; must FAIL",
      [](Problem& p, cudaStream_t s) { launch_stream(stream_v9_one_warp_kernel, p, 0, s); });
  v9.reference = kReverseTiles;
  v9.negative = true;
}

}  // namespace ch03
