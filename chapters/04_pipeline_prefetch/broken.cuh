/// @file broken.cuh
/// @brief Chapter 04's deliberately broken variants: copies of stream_v2_pipeline_kernel
///        (kernels.cuh, without its timeline calls and perturbation points), at 4 stages (v8)
///        and at one stage (v9), each with its one changed line marked // BUG:. Each must FAIL
///        under --check-only. main.cu calls add_negatives() at the end of its registry.
#pragma once

#include <cuda/pipeline>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "common/harness.cuh"
#include "common/launch.cuh"
#include "kernels.cuh"
#include "problem.cuh"

namespace ch04 {

// ---------------------------------------------------------------------------------------------
// v8 (negative): the producer's slot counter wraps to 1 instead of 0
// ---------------------------------------------------------------------------------------------
// A copy of v2 at 4 stages with one changed line. Tiles 0 .. STAGES-1 go to slots 0 .. 3; then
// the counter wraps to 1, so tile STAGES (4) is issued into slot 1 in iteration 1, while slot 1
// still holds tile 1, which that same iteration reads (its wait_prior<3> leaves tile 4's copy
// in flight): from iteration 1 on, each tile races with the copy that refills its own slot.
// And in iteration STAGES the consumer reads slot 0, which still holds tile 0: that read is
// wrong whatever the timing, so a block with more than STAGES tiles always fails. A block with
// at most STAGES tiles never does (it issues no tile past the first lap). The harness's lap
// check (two blocks, many laps each) is what exposes it at a small size.
constexpr int WRAP_BUG_STAGES = 4;
__global__ void __launch_bounds__(THREADS)
    stream_v8_wrap_bug_kernel(const uint4* __restrict__ d_in, uint4* __restrict__ d_out,
                              std::size_t n_vecs, int rounds) {
  constexpr int STAGES = WRAP_BUG_STAGES;
  __shared__ alignas(16) uint4 s_ring[STAGES * TILE_VECS];
  const int tid = threadIdx.x;
  const std::size_t num_tiles = (n_vecs + TILE_VECS - 1) / TILE_VECS;
  const std::size_t my_tiles =
      blockIdx.x < num_tiles ? (num_tiles - 1 - blockIdx.x) / gridDim.x + 1 : 0;
  cuda::pipeline<cuda::thread_scope_thread> pipe = cuda::make_pipeline();
  int produce_slot = 0;
  int consume_slot = 0;
  auto produce = [&](std::size_t tile) {
    pipe.producer_acquire();
    if (tile < my_tiles) {
      const std::size_t base = (blockIdx.x + tile * gridDim.x) * TILE_VECS;
      if (tid < tile_count(n_vecs, base))
        cuda::memcpy_async(&s_ring[produce_slot * TILE_VECS + tid], &d_in[base + tid],
                           cuda::aligned_size_t<16>(sizeof(uint4)), pipe);
    }
    pipe.producer_commit();
    produce_slot = produce_slot + 1 == STAGES ? 1 : produce_slot + 1;  // BUG: wraps to 1, not 0
  };
  for (int s = 0; s < STAGES - 1; ++s) produce(static_cast<std::size_t>(s));
  for (std::size_t tile = 0; tile < my_tiles; ++tile) {
    produce(tile + STAGES - 1);
    cuda::pipeline_consumer_wait_prior<STAGES - 1>(pipe);
    __syncthreads();
    const std::size_t base = (blockIdx.x + tile * gridDim.x) * TILE_VECS;
    const int count = tile_count(n_vecs, base);
    if (tid < count) d_out[base + tid] = work_vec(s_ring[consume_slot * TILE_VECS + count - 1 - tid], rounds);
    pipe.consumer_release();
    __syncthreads();
    consume_slot = consume_slot + 1 == STAGES ? 0 : consume_slot + 1;
  }
  cuda::pipeline_consumer_wait_prior<0>(pipe);
}

// ---------------------------------------------------------------------------------------------
// v9 (negative): wait_prior<STAGES> instead of wait_prior<STAGES-1>, at one stage
// ---------------------------------------------------------------------------------------------
// A copy of v2 at one stage with one changed line. wait_prior<1> is "all but the newest group"
// - and the newest group IS the tile about to be read, issued a few dozen cycles earlier, far
// less than any L2 or DRAM round trip. The reads see the previous tile (or, for the first,
// whatever the slot held). With more stages the same mistake reads a tile issued STAGES-1
// iterations earlier, which has usually landed: the bug is real but hides, which is why the
// negative uses the one-stage instance that shows it.
__global__ void __launch_bounds__(THREADS)
    stream_v9_wrong_wait_kernel(const uint4* __restrict__ d_in, uint4* __restrict__ d_out,
                                std::size_t n_vecs, int rounds) {
  __shared__ alignas(16) uint4 s_tile[TILE_VECS];  // the one-slot ring
  const int tid = threadIdx.x;
  const std::size_t num_tiles = (n_vecs + TILE_VECS - 1) / TILE_VECS;
  const std::size_t my_tiles =
      blockIdx.x < num_tiles ? (num_tiles - 1 - blockIdx.x) / gridDim.x + 1 : 0;
  cuda::pipeline<cuda::thread_scope_thread> pipe = cuda::make_pipeline();
  for (std::size_t tile = 0; tile < my_tiles; ++tile) {
    const std::size_t base = (blockIdx.x + tile * gridDim.x) * TILE_VECS;
    const int count = tile_count(n_vecs, base);
    pipe.producer_acquire();
    if (tid < count)
      cuda::memcpy_async(&s_tile[tid], &d_in[base + tid], cuda::aligned_size_t<16>(sizeof(uint4)), pipe);
    pipe.producer_commit();
    cuda::pipeline_consumer_wait_prior<1>(pipe);  // BUG: one stage must wait_prior<0>
    __syncthreads();
    if (tid < count) d_out[base + tid] = work_vec(s_tile[count - 1 - tid], rounds);
    pipe.consumer_release();
    __syncthreads();
  }
  cuda::pipeline_consumer_wait_prior<0>(pipe);
}

inline void launch_stream_v8(const uint4* d_in, uint4* d_out, std::size_t n_vecs, int rounds,
                             int sm_count, int blocks_per_sm, cudaStream_t s) {
  tut::launch_persistent(stream_v8_wrap_bug_kernel, THREADS, 0, sm_count, blocks_per_sm, s, d_in,
                         d_out, n_vecs, rounds);
}

inline void launch_stream_v9(const uint4* d_in, uint4* d_out, std::size_t n_vecs, int rounds,
                             int sm_count, int blocks_per_sm, cudaStream_t s) {
  tut::launch_persistent(stream_v9_wrong_wait_kernel, THREADS, 0, sm_count, blocks_per_sm, s, d_in,
                         d_out, n_vecs, rounds);
}

/// @brief Registers v8 and v9 (negatives) in the chapter's variant list.
inline void add_negatives(tut::VariantList<Problem>& v) {
  tut::Variant<Problem>& v8 = v.add(
      "v8_wrap_bug", "v8 BROKEN: slot wraps to 1",
      "negative: 4-stage ring whose producer wraps to slot 1, so tile 4 reads tile 0; must FAIL",
      [](Problem& p, cudaStream_t s) {
        launch_stream_v8(p.in_vecs(), p.out_vecs(), p.n_vecs(), p.rounds, p.sms(),
                         p.blocks_per_sm(), s);
      });
  v8.reference = kWork;
  v8.negative = true;
  tut::Variant<Problem>& v9 = v.add(
      "v9_wrong_wait", "v9 BROKEN: wait_prior<STAGES>",
      "negative: 1 stage waiting on prior<1> instead of prior<0>; must FAIL",
      [](Problem& p, cudaStream_t s) {
        launch_stream_v9(p.in_vecs(), p.out_vecs(), p.n_vecs(), p.rounds, p.sms(), 1, s);
      });
  v9.reference = kWork;
  v9.negative = true;
}

}  // namespace ch04
