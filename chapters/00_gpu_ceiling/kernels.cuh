// Chapter 00: your GPU and its ceiling
//
// What it teaches: before any async copy, know the number everything is measured against.
// A streaming kernel can never beat the DRAM bandwidth of the card, and the best practical
// estimate of that is a large device-to-device cudaMemcpyAsync (the copy engine/driver path,
// tuned by NVIDIA). Every later chapter reports "% of ceiling" against that copy, measured in
// the same run, because clocks, other tenants and the card's state move the absolute figure.
//
// "Bytes moved" means bytes read from plus bytes written to global memory, counted once:
// copying N bytes moves 2N bytes. Halo re-reads or cache hits are not counted, so a kernel
// that re-reads data appears to go no faster than one that doesn't.
//
// Kernels: plain copies with no shared memory - 4 B per thread, 16 B per thread, and 16 B
// per thread with 4 independent loads in flight - plus a size sweep that shows how the
// 60 MiB L2 of an H200 flatters small working sets.
//
// Minimum compute capability: 8.0 (the tutorial's floor).
// Run:    build/bin/ch00_gpu_ceiling [--size=1G]       (the sweep runs after the table)
// Output: device properties, the harness table, then the sweep table.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "common/device_buffer.cuh"
#include "common/harness.cuh"

namespace ch00 {

constexpr int THREADS = 256;
constexpr int UNROLL = 4;  // v3: independent 16-byte loads per thread per iteration

// ---------------------------------------------------------------------------------------------
// v0: cudaMemcpyAsync device-to-device (no kernel of ours; the ceiling itself)
// v1: one 4-byte word per thread per iteration (LDG.E / STG.E)
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
  // EXERCISE-BEGIN: copy the last n_words % 4 words, which do not fill a 16-byte vector (one word per thread)
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
    uint4 r[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) r[u] = d_in[i + u * threads];  // UNROLL loads in flight
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) d_out[i + u * threads] = r[u];
  }
  for (; i < n_vecs; i += threads) d_out[i] = d_in[i];  // remainder of whole vectors
  const auto* in_words = reinterpret_cast<const std::uint32_t*>(d_in);
  auto* out_words = reinterpret_cast<std::uint32_t*>(d_out);
  const std::size_t tail = n_vecs * 4 + first;
  if (tail < n_words) out_words[tail] = in_words[tail];
}

// ---------------------------------------------------------------------------------------------
// v9 (negative): forgets the tail words - right for multiples of 16 bytes only.
// ---------------------------------------------------------------------------------------------
__global__ void copy_v9_no_tail_kernel(const uint4* __restrict__ d_in, uint4* __restrict__ d_out,
                                       std::size_t n_words) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n_words / 4; i += stride)
    d_out[i] = d_in[i];
}

// ---------------------------------------------------------------------------------------------
// Launchers: a full-occupancy persistent grid (resident blocks per SM x SMs).
// ---------------------------------------------------------------------------------------------
inline void launch_copy_v0(const std::uint32_t* d_in, std::uint32_t* d_out, std::size_t n_words,
                           cudaStream_t s) {
  CUDA_CHECK(cudaMemcpyAsync(d_out, d_in, n_words * 4, cudaMemcpyDeviceToDevice, s));
}
inline void launch_copy_v1(const std::uint32_t* d_in, std::uint32_t* d_out, std::size_t n_words,
                           int sms, cudaStream_t s) {
  const unsigned grid = tut::persistent_grid(copy_v1_word_kernel, THREADS, sms);
  copy_v1_word_kernel<<<grid, THREADS, 0, s>>>(d_in, d_out, n_words);
}
inline void launch_copy_v2(const std::uint32_t* d_in, std::uint32_t* d_out, std::size_t n_words,
                           int sms, cudaStream_t s) {
  const unsigned grid = tut::persistent_grid(copy_v2_vec4_kernel, THREADS, sms);
  copy_v2_vec4_kernel<<<grid, THREADS, 0, s>>>(reinterpret_cast<const uint4*>(d_in),
                                               reinterpret_cast<uint4*>(d_out), n_words);
}
inline void launch_copy_v3(const std::uint32_t* d_in, std::uint32_t* d_out, std::size_t n_words,
                           int sms, cudaStream_t s) {
  const unsigned grid = tut::persistent_grid(copy_v3_vec4_unrolled_kernel, THREADS, sms);
  copy_v3_vec4_unrolled_kernel<<<grid, THREADS, 0, s>>>(reinterpret_cast<const uint4*>(d_in),
                                                        reinterpret_cast<uint4*>(d_out), n_words);
}
inline void launch_copy_v9(const std::uint32_t* d_in, std::uint32_t* d_out, std::size_t n_words,
                           int sms, cudaStream_t s) {
  const unsigned grid = tut::persistent_grid(copy_v9_no_tail_kernel, THREADS, sms);
  copy_v9_no_tail_kernel<<<grid, THREADS, 0, s>>>(reinterpret_cast<const uint4*>(d_in),
                                                  reinterpret_cast<uint4*>(d_out), n_words);
}

// ---------------------------------------------------------------------------------------------
// The problem: copy `size` bytes of unique 32-bit words. Reference: the input itself.
// ---------------------------------------------------------------------------------------------
struct Problem {
  explicit Problem(const tut::RunConfig& cfg)
      : cfg(cfg), n_words(cfg.size / 4), d_in(n_words), d_out(n_words), h_in(n_words) {
    tut::fill_unique_words(h_in.data(), n_words, cfg.seed);
    d_in.upload(h_in);
  }
  void poison(cudaStream_t s) { d_out.poison(s); }
  tut::VerifyResult verify(cudaStream_t s, int /*reference*/) {
    const std::vector<std::uint32_t> got = d_out.download(s);
    return tut::compare_exact_words(got.data(), h_in.data(), n_words);
  }
  double work() const { return 2.0 * static_cast<double>(n_words) * 4; }
  std::string describe() const { return tut::format_bytes(double(cfg.size)) + " copied"; }

  tut::RunConfig cfg;
  std::size_t n_words;
  tut::DeviceBuffer<std::uint32_t> d_in, d_out;
  std::vector<std::uint32_t> h_in;
};

inline std::vector<tut::Variant<Problem>> variants() {
  using V = tut::Variant<Problem>;
  auto sms = [](Problem& p) { return p.cfg.device.sm_count; };
  std::vector<V> v;
  v.push_back(V{"v0_memcpy", "v0 cudaMemcpyAsync D2D", "the driver's device-to-device copy",
                [](Problem& p, cudaStream_t s) {
                  launch_copy_v0(p.d_in.data(), p.d_out.data(), p.n_words, s);
                }});
  v.back().is_ceiling = true;  // v0 is the ceiling itself: "% of ceiling" is relative to it
  v.push_back(V{"v1_word", "v1 LDG->STG 4 B/thread", "one 32-bit word per thread per step",
                [sms](Problem& p, cudaStream_t s) {
                  launch_copy_v1(p.d_in.data(), p.d_out.data(), p.n_words, sms(p), s);
                }});
  v.push_back(V{"v2_vec4", "v2 LDG->STG 16 B/thread", "one 16-byte vector per thread per step",
                [sms](Problem& p, cudaStream_t s) {
                  launch_copy_v2(p.d_in.data(), p.d_out.data(), p.n_words, sms(p), s);
                }});
  v.push_back(V{"v3_vec4_x4", "v3 LDG->STG 16 B x4/thread",
                "four independent 16-byte loads in flight per thread",
                [sms](Problem& p, cudaStream_t s) {
                  launch_copy_v3(p.d_in.data(), p.d_out.data(), p.n_words, sms(p), s);
                }});
  v.push_back(V{"v9_no_tail", "v9 BROKEN: drops tail words",
                "negative: ignores the last size % 16 bytes; must FAIL",
                [sms](Problem& p, cudaStream_t s) {
                  launch_copy_v9(p.d_in.data(), p.d_out.data(), p.n_words, sms(p), s);
                }});
  v.back().negative = true;
  return v;
}

}  // namespace ch00
