/// @file workload_stencil_stream_kernels.cuh
/// @brief What every kernel on the stencil/stream workload (workload_stencil_stream.cuh)
///        shares, and how it is launched: the block size, the stencil's window sum, the
///        launchers (256 threads on a persistent grid over the Problem's buffers). The chapters
///        register their variants with plain tut::VariantList::add calls on these launchers.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "launch.cuh"
#include "workload_stencil_stream.cuh"

namespace tut::stencil_stream {

/// @brief Threads per block of every kernel on this workload: one per stencil output and one
///        per stream float4 of a tile.
inline constexpr int kThreads = 256;

/// @brief The stencil's output for thread @p t of a tile staged in shared memory as
///        [kRadius halo | kStencilTileElems | kRadius halo]: the 2*kRadius+1 elements centred
///        on slot kRadius + t, summed left to right (the order of the CPU reference).
__device__ __forceinline__ float stencil_sum(const float* s_tile, int t) {
  float sum = 0.0f;
#pragma unroll
  for (int k = -kRadius; k <= kRadius; ++k) sum += s_tile[kRadius + t + k];
  return sum;
}

using StencilKernel = void (*)(const float*, float*, std::size_t);
using StreamKernel = void (*)(const float4*, float4*, std::size_t);

/// @brief Runs a stencil kernel over the Problem's buffers, as many blocks per SM as fit.
inline void launch_stencil(StencilKernel kernel, Problem& p, cudaStream_t s) {
  launch_persistent(kernel, kThreads, 0, p.sms(), 0, s, p.d_in.data(), p.d_out.data(), p.n_words);
}

/// @brief Runs a stream kernel over the Problem's buffers at @p blocks_per_sm blocks per SM
///        (0: as many as fit, i.e. full occupancy; the "_low" rows pass p.blocks_per_sm()).
inline void launch_stream(StreamKernel kernel, Problem& p, int blocks_per_sm, cudaStream_t s) {
  launch_persistent(kernel, kThreads, 0, p.sms(), blocks_per_sm, s, p.in_vecs(), p.out_vecs(),
                    p.n_vecs());
}

/// @brief launch_stream() of @p kernel as VariantList::add_low_and_full() takes it:
///        `(Problem&, cudaStream_t, int blocks_per_sm)`.
inline auto stream_with(StreamKernel kernel) {
  return [kernel](Problem& p, cudaStream_t s, int blocks_per_sm) {
    launch_stream(kernel, p, blocks_per_sm, s);
  };
}

}  // namespace tut::stencil_stream
