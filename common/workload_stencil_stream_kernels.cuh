/// @file workload_stencil_stream_launch.cuh
/// @brief How every kernel on the stencil/stream workload (workload_stencil_stream.cuh) is
///        launched: 256 threads on a persistent grid over the Problem's buffers, and the
///        variant launch functions that chapters 01-03 register.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <functional>

#include "launch.cuh"
#include "workload_stencil_stream.cuh"

namespace tut::stencil_stream {

/// @brief Threads per block of every kernel on this workload: one per stencil output and one
///        per stream float4 of a tile.
inline constexpr int kThreads = 256;

using StencilKernel = void (*)(const float*, float*, std::size_t);
using StreamKernel = void (*)(const float4*, float4*, std::size_t);

/// @brief Runs a stencil kernel over the Problem's buffers, as many blocks per SM as fit.
inline void launch_stencil(StencilKernel kernel, Problem& p, cudaStream_t s) {
  const unsigned grid = persistent_grid(kernel, kThreads, p.sms());
  kernel<<<grid, kThreads, 0, s>>>(p.d_in.data(), p.d_out.data(), p.n_words);
}

/// @brief Runs a stream kernel over the Problem's buffers at @p blocks_per_sm blocks per SM
///        (0: as many as fit, i.e. full occupancy).
inline void launch_stream(StreamKernel kernel, Problem& p, int blocks_per_sm, cudaStream_t s) {
  const unsigned grid = persistent_grid(kernel, kThreads, p.sms(), blocks_per_sm);
  kernel<<<grid, kThreads, 0, s>>>(p.in_vecs(), p.out_vecs(), p.n_vecs());
}

/// @brief Where a stream variant runs: at --blocks-per-sm (default 1; the "_low" rows) or with
///        as many blocks per SM as fit (the "_full" rows).
enum class Occupancy { kLow, kFull };

/// @brief A variant's launch function (VariantList::add) for a stencil kernel.
inline std::function<void(Problem&, cudaStream_t)> stencil_variant(StencilKernel kernel) {
  return [kernel](Problem& p, cudaStream_t s) { launch_stencil(kernel, p, s); };
}

/// @brief A variant's launch function (VariantList::add) for a stream kernel at @p occupancy.
inline std::function<void(Problem&, cudaStream_t)> stream_variant(StreamKernel kernel,
                                                                  Occupancy occupancy) {
  return [kernel, occupancy](Problem& p, cudaStream_t s) {
    launch_stream(kernel, p, occupancy == Occupancy::kLow ? p.low_blocks_per_sm() : 0, s);
  };
}

}  // namespace tut::stencil_stream
