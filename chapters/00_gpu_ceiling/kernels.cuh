/// @file kernels.cuh
/// @brief Chapter 00's copy kernels (4 B, 16 B, and 4 x 16 B per thread, no shared memory)
///        and their launchers: the baselines measured against the cudaMemcpyAsync ceiling.
///
/// What it teaches: before any async copy, know the number everything is measured against.
/// A streaming kernel can never beat the DRAM bandwidth of the card, and the best practical
/// estimate of that is a large device-to-device cudaMemcpyAsync: a copy the CUDA driver
/// performs for us. On the H200 it runs on the SMs, not on a copy engine: a probe shows it
/// waiting for SMs that another kernel holds (README, "Who performs that copy?"). Every later
/// chapter reports "% of ceiling" against that copy, measured in the same run, because clocks,
/// other tenants and the card's state move the absolute figure.
///
/// "Bytes moved" means bytes read from plus bytes written to global memory, counted once:
/// copying N bytes moves 2N bytes. Halo re-reads or cache hits are not counted, so a kernel
/// that re-reads data appears to go no faster than one that doesn't.
///
/// Reading order: v1 (4 B per thread), v2 (16 B per thread), v3 (16 B x 4 in flight per
/// thread), then the launchers. The Problem, the registry and the size sweep are in main.cu;
/// the negative v9 (forgets the tail) is in broken.cuh.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "common/cuda_check.cuh"
#include "common/launch.cuh"

namespace ch00 {

constexpr int THREADS = 256;
constexpr int UNROLL = 4;  // v3: independent 16-byte loads per thread per iteration

// ---------------------------------------------------------------------------------------------
// v0: cudaMemcpyAsync device-to-device (no kernel of ours; the ceiling itself)
// v1: one 4-byte word per thread per iteration (LDG.E / STG.E). Every kernel here is a
//     grid-stride loop: correct for any grid, so the harness's two-block lap check runs it too.
// ---------------------------------------------------------------------------------------------
__global__ void copy_v1_word_kernel(const std::uint32_t* __restrict__ d_in,
                                    std::uint32_t* __restrict__ d_out, std::size_t n_words) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n_words; i += stride)
    d_out[i] = d_in[i];
}

// ---------------------------------------------------------------------------------------------
// v2: 16 bytes per thread per iteration (LDG.E.128 / STG.E.128): a quarter of the
//     instructions for the same bytes. The last n_words % 4 words are copied one at a time.
// ---------------------------------------------------------------------------------------------
__global__ void copy_v2_vec4_kernel(const uint4* __restrict__ d_in, uint4* __restrict__ d_out,
                                    std::size_t n_words) {
  const std::size_t n_vecs = n_words / 4;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t first = blockIdx.x * blockDim.x + threadIdx.x;
  for (std::size_t i = first; i < n_vecs; i += stride) d_out[i] = d_in[i];
  // EXERCISE-BEGIN: the last n_words % 4 words do not fill a 16-byte vector: copy them too, one word per thread
  const auto* in_words = reinterpret_cast<const std::uint32_t*>(d_in);
  auto* out_words = reinterpret_cast<std::uint32_t*>(d_out);
  const std::size_t tail = n_vecs * 4 + first;
  if (tail < n_words) out_words[tail] = in_words[tail];
  // EXERCISE-END
}

// ---------------------------------------------------------------------------------------------
// v3: 16 bytes x UNROLL per thread: the loads are issued back to back before the first
//     store, so each thread has UNROLL requests in flight. Same bytes, more memory-level
//     parallelism per thread - the theme of the whole tutorial.
// ---------------------------------------------------------------------------------------------
__global__ void copy_v3_vec4_unrolled_kernel(const uint4* __restrict__ d_in,
                                             uint4* __restrict__ d_out, std::size_t n_words) {
  const std::size_t n_vecs = n_words / 4;
  const std::size_t threads = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t first = blockIdx.x * blockDim.x + threadIdx.x;
  std::size_t i = first;
  for (; i + (UNROLL - 1) * threads < n_vecs; i += UNROLL * threads) {
    // EXERCISE-BEGIN: copy this thread's UNROLL vectors of the step (i, i + threads, ...), with every load issued before the first store so that all of them are in flight together
    uint4 r[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) r[u] = d_in[i + u * threads];  // UNROLL loads in flight
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) d_out[i + u * threads] = r[u];
    // EXERCISE-END
  }
  // EXERCISE-BEGIN: what the unrolled steps left: the whole vectors of a last, partial step, then the words that do not fill a vector
  for (; i < n_vecs; i += threads) d_out[i] = d_in[i];  // remainder of whole vectors
  const auto* in_words = reinterpret_cast<const std::uint32_t*>(d_in);
  auto* out_words = reinterpret_cast<std::uint32_t*>(d_out);
  const std::size_t tail = n_vecs * 4 + first;
  if (tail < n_words) out_words[tail] = in_words[tail];
  // EXERCISE-END
}

// ---------------------------------------------------------------------------------------------
// Launchers: a full-occupancy persistent grid (resident blocks per SM x SMs), via
// tut::launch_persistent (its occupancy query runs once per kernel, not per launch).
// ---------------------------------------------------------------------------------------------
inline void launch_copy_v0(const std::uint32_t* d_in, std::uint32_t* d_out, std::size_t n_words,
                           cudaStream_t s) {
  CUDA_CHECK(cudaMemcpyAsync(d_out, d_in, n_words * 4, cudaMemcpyDeviceToDevice, s));
}
inline void launch_copy_v1(const std::uint32_t* d_in, std::uint32_t* d_out, std::size_t n_words,
                           int sms, cudaStream_t s) {
  tut::launch_persistent(copy_v1_word_kernel, THREADS, 0, sms, 0, s, d_in, d_out, n_words);
}
inline void launch_copy_v2(const std::uint32_t* d_in, std::uint32_t* d_out, std::size_t n_words,
                           int sms, cudaStream_t s) {
  tut::launch_persistent(copy_v2_vec4_kernel, THREADS, 0, sms, 0, s,
                         reinterpret_cast<const uint4*>(d_in), reinterpret_cast<uint4*>(d_out),
                         n_words);
}
inline void launch_copy_v3(const std::uint32_t* d_in, std::uint32_t* d_out, std::size_t n_words,
                           int sms, cudaStream_t s) {
  tut::launch_persistent(copy_v3_vec4_unrolled_kernel, THREADS, 0, sms, 0, s,
                         reinterpret_cast<const uint4*>(d_in), reinterpret_cast<uint4*>(d_out),
                         n_words);
}

}  // namespace ch00
