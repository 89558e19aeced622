// EXERCISE for chapter 05_pipeline_primitives, generated from ../kernels.cuh by tools/make_exercise.py.
// Fill in every TODO(exercise) until `chNN_topic_exercise` reports PASS.
// Chapter 05: the __pipeline_* primitives (<cuda_pipeline.h>) and completion on an mbarrier
//
// What it adds over chapter 04: the same multi-stage prefetch loop, written with the C-style
// primitives that sit one level below cuda::pipeline. Each primitive is one PTX instruction:
//   __pipeline_memcpy_async(dst, src, 16|8|4, zfill)  cp.async.{cg|ca}.shared.global (LDGSTS)
//   __pipeline_commit()                               cp.async.commit_group        (LDGDEPBAR)
//   __pipeline_wait_prior(N)                          cp.async.wait_group N        (DEPBAR.LE)
//   __pipeline_arrive_on(&mbar)                       cp.async.mbarrier.arrive     (ARRIVES)
// with double and triple buffering, 4/8/16-byte element copies, the zero-fill argument for the
// ragged tail of the array, and a variant that completes on an mbarrier
// (<cuda_awbarrier_primitives.h>: __mbarrier_init / __mbarrier_arrive /
// __mbarrier_test_wait_parity) instead of on commit groups.
//
// Workload (every variant): 4 KiB tiles of 1024 32-bit words. The last tile of the array may
// be ragged (any number of words). A tile is zero-padded to a whole number of 16-byte vectors
// and reversed word by word, and the first `count` words are written: out[j] = pad[P-1-j].
// The zeros therefore appear in the output of a ragged tile, so the check sees whether the
// copy's zero-fill really happened.
//
// Minimum compute capability: 8.0 (cp.async). Run:
//   build/bin/ch05_pipeline_primitives [--blocks-per-sm=N] [--size=1G] [--list]
// Output: the harness table (median/min ms, GB/s, % of the memcpy ceiling, vs v0, check).
#pragma once

#include <cuda_awbarrier_primitives.h>
#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <cuda/pipeline>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "chapters/05_pipeline_primitives/reversed_tiles.cuh"  // from the root: exercise/ too
#include "common/device_buffer.cuh"
#include "common/harness.cuh"

namespace ch05 {

// ---------------------------------------------------------------------------------------------
// The workload, shared with chapter 06: reversed_tiles.cuh
// ---------------------------------------------------------------------------------------------
// THREADS (256), TILE_WORDS (1024), VEC_WORDS (4); the tile indexing (tile_count, padded_count,
// tiles_for_block, tile_base); the consumer consume_reverse, the same in every variant, which
// reads vectors that other warps copied: hence a block-wide barrier in every kernel below;
// reference_reverse_padded; Problem.
using namespace reversed_tiles;

// ---------------------------------------------------------------------------------------------
// v0: chapter 04's multi-stage prefetch - cuda::pipeline<thread_scope_thread>, 16-byte copies
// ---------------------------------------------------------------------------------------------
// The ragged vector at the end of the array cannot use the 16-byte form (it would read past
// the end), and cuda::memcpy_async has no zero-fill operand: the thread copies the valid words
// one by one (4-byte cp.async) and stores zeros into the rest of the vector itself.
template <int STAGES>
__global__ void __launch_bounds__(THREADS)
    stream_v0_cuda_pipeline_kernel(const std::uint32_t* __restrict__ d_in,
                                   std::uint32_t* __restrict__ d_out, std::size_t n_words) {
  __shared__ alignas(16) std::uint32_t s_tiles[STAGES][TILE_WORDS];  // STAGES x 4 KiB ring
  cuda::pipeline<cuda::thread_scope_thread> pipe = cuda::make_pipeline();
  const int t = threadIdx.x;
  const std::size_t my_tiles = tiles_for_block(n_words);

  auto issue = [&](std::size_t k) {  // copy this thread's vector of tile k into slot k % STAGES
    pipe.producer_acquire();
    if (k < my_tiles) {
      const std::size_t base = tile_base(k);
      const int w = t * VEC_WORDS;  // first word of this thread's vector
      const int valid = tile_count(n_words, base) - w;
      std::uint32_t* dst = &s_tiles[k % STAGES][w];
      if (valid >= VEC_WORDS) {
        cuda::memcpy_async(dst, d_in + base + w, cuda::aligned_size_t<16>(16), pipe);
      } else if (valid > 0) {
        for (int i = 0; i < VEC_WORDS; ++i) {
          if (i < valid)
            cuda::memcpy_async(dst + i, d_in + base + w + i, cuda::aligned_size_t<4>(4), pipe);
          else
            dst[i] = 0u;  // plain STS: ordered before the readers by the barrier below
        }
      }
    }
    pipe.producer_commit();  // one commit group per tile, even an empty one: keeps the count
  };

  // prologue: fill STAGES-1 slots
  for (int s = 0; s < STAGES - 1; ++s) issue(s);
  for (std::size_t k = 0; k < my_tiles; ++k) {
    // steady state. Committed groups: STAGES-1+k. Leaving STAGES-2 pending means groups
    // 0..k are complete: this thread's part of tile k is in slot k % STAGES.
    cuda::pipeline_consumer_wait_prior<STAGES - 2>(pipe);
    // Every thread's part of tile k has landed, and every thread has finished reading slot
    // (k-1) % STAGES in the previous iteration, so that slot may be refilled.
    __syncthreads();
    issue(k + STAGES - 1);
    consume_reverse(s_tiles[k % STAGES], d_out, tile_base(k), tile_count(n_words, tile_base(k)));
    pipe.consumer_release();
  }
  // epilogue: the trailing groups are empty (k >= my_tiles), nothing to drain.
}

// ---------------------------------------------------------------------------------------------
// v1: the same loop with the primitives; COPY_BYTES = 16, 8 or 4 per cp.async
// ---------------------------------------------------------------------------------------------
// Each thread moves 16 bytes of every tile, as one 16-byte, two 8-byte or four 4-byte copies
// (element e of the tile is thread e % 256's). The 4th argument of __pipeline_memcpy_async is
// the number of trailing bytes to ZERO (PTX's src-size is COPY_BYTES - zfill): the ragged
// vector reads only its valid words, and a copy wholly past the end reads nothing and writes
// zeros, so the padded tile is complete without any plain store.
template <int COPY_BYTES>
__device__ inline void issue_tile_primitives(std::uint32_t* s_slot,
                                             const std::uint32_t* __restrict__ d_in,
                                             std::size_t base, int count) {
  constexpr int ELEM_WORDS = COPY_BYTES / 4;
  constexpr int COPIES = TILE_WORDS / ELEM_WORDS / THREADS;  // 1, 2 or 4 per thread
  const int padded = padded_count(count);
#pragma unroll
  for (int c = 0; c < COPIES; ++c) {
    const int w = (c * THREADS + static_cast<int>(threadIdx.x)) * ELEM_WORDS;  // first word
    if (w >= padded) continue;   // beyond the padded tile: nothing to copy or zero
    const int left = count - w;  // may be <= 0 for 4-byte copies
    const int valid = left < 0 ? 0 : (left < ELEM_WORDS ? left : ELEM_WORDS);
    // TODO(exercise): zfill = the bytes of this copy to ZERO (past the array's end), not to read
    const int zfill = 0;
    // With src-size 0 nothing is read, but the address must still be a valid, aligned global
    // address: point such copies at the tile's first word.
    const std::uint32_t* src = d_in + base + (valid > 0 ? w : 0);
    __pipeline_memcpy_async(s_slot + w, src, COPY_BYTES, zfill);
  }
}

template <int STAGES, int COPY_BYTES>
__global__ void __launch_bounds__(THREADS)
    stream_v1_primitives_kernel(const std::uint32_t* __restrict__ d_in,
                                std::uint32_t* __restrict__ d_out, std::size_t n_words) {
  static_assert(STAGES >= 2 && STAGES <= 8, "__pipeline_wait_prior clamps its count at 8");
  __shared__ alignas(16) std::uint32_t s_tiles[STAGES][TILE_WORDS];  // STAGES x 4 KiB ring
  const std::size_t my_tiles = tiles_for_block(n_words);
  auto issue = [&](std::size_t k) {
    if (k < my_tiles) {
      const std::size_t base = tile_base(k);
      issue_tile_primitives<COPY_BYTES>(s_tiles[k % STAGES], d_in, base, tile_count(n_words, base));
    }
    __pipeline_commit();  // cp.async.commit_group: closes this thread's group for tile k
  };

  // prologue: STAGES-1 tiles in flight (double buffering: 1, triple buffering: 2)
  for (int s = 0; s < STAGES - 1; ++s) issue(s);
  for (std::size_t k = 0; k < my_tiles; ++k) {
    // cp.async.wait_group STAGES-2: at most the newest STAGES-2 groups of THIS THREAD may be
    // pending, so its group k is complete. It says nothing about other threads' copies...
    __pipeline_wait_prior(STAGES - 2);
    // ...hence the barrier: after it, all of tile k is in slot k % STAGES, and nobody still
    // reads slot (k-1) % STAGES, which the next line refills.
    __syncthreads();
    issue(k + STAGES - 1);
    consume_reverse(s_tiles[k % STAGES], d_out, tile_base(k), tile_count(n_words, tile_base(k)));
  }
}

// ---------------------------------------------------------------------------------------------
// v2: complete on an mbarrier: __pipeline_arrive_on + <cuda_awbarrier_primitives.h>
// ---------------------------------------------------------------------------------------------
// One mbarrier per slot, expecting THREADS arrivals per phase. For each tile every thread
//   1. issues its copies,
//   2. __pipeline_arrive_on(&bar): cp.async.mbarrier.arrive - raises the barrier's pending
//      count by one now, and lowers it when all of this thread's earlier cp.async complete,
//   3. __mbarrier_arrive(&bar): its own arrival.
// The phase completes when all 256 threads arrived AND all their copies landed, so a thread
// that sees the phase flip knows the WHOLE tile is in shared memory: no commit groups, and no
// __syncthreads for visibility. __mbarrier_arrive returns a token naming the phase it arrived
// on; __mbarrier_test_wait(bar, token) is true once that phase completed. (The parity form,
// __mbarrier_test_wait_parity, is sm_90-only in this header - it traps on sm_80 - so the
// token, kept per slot, is the portable way.) The __syncthreads that remains protects slot reuse
// (the barrier says "tile landed", not "everyone finished reading the previous tile"); chapter 07
// replaces it with a second, "consumed" barrier per slot.
template <int STAGES>
__global__ void __launch_bounds__(THREADS)
    stream_v2_mbarrier_kernel(const std::uint32_t* __restrict__ d_in,
                              std::uint32_t* __restrict__ d_out, std::size_t n_words) {
  __shared__ alignas(16) std::uint32_t s_tiles[STAGES][TILE_WORDS];  // STAGES x 4 KiB ring
  __shared__ __mbarrier_t s_full[STAGES];                            // "slot holds its tile"
  if (threadIdx.x == 0)
    for (int s = 0; s < STAGES; ++s) __mbarrier_init(&s_full[s], THREADS);
  __syncthreads();  // the initialised barriers are visible before anyone arrives
  const std::size_t my_tiles = tiles_for_block(n_words);
  __mbarrier_token_t r_token[STAGES];  // the phase this thread arrived on, per slot
  auto issue = [&](std::size_t k) {
    if (k >= my_tiles) return;  // no arrivals either: nobody waits for this phase
    const std::size_t base = tile_base(k);
    issue_tile_primitives<16>(s_tiles[k % STAGES], d_in, base, tile_count(n_words, base));
    __pipeline_arrive_on(&s_full[k % STAGES]);
    r_token[k % STAGES] = __mbarrier_arrive(&s_full[k % STAGES]);
  };

  for (int s = 0; s < STAGES - 1; ++s) issue(s);  // prologue
  for (std::size_t k = 0; k < my_tiles; ++k) {
    // Wait for the phase of slot k % STAGES that tile k's arrivals belong to: when it
    // completes, all 256 threads' copies of tile k have landed. test_wait polls once; the
    // loop spins (try_wait, which can suspend the thread, needs sm_90).
    while (!__mbarrier_test_wait(&s_full[k % STAGES], r_token[k % STAGES])) {
    }
    __syncthreads();  // slot (k-1) % STAGES: everyone finished reading it
    issue(k + STAGES - 1);
    consume_reverse(s_tiles[k % STAGES], d_out, tile_base(k), tile_count(n_words, tile_base(k)));
  }
}

// ---------------------------------------------------------------------------------------------
// v9 (negative): the 4th argument of __pipeline_memcpy_async taken for PTX's src-size
// ---------------------------------------------------------------------------------------------
// The PTX operand is "bytes to read"; the primitive's is "bytes to zero". Passing the number of
// valid bytes zero-fills every full vector (zfill = 16) and reads past the end of the ragged
// one. Every output word of a full vector becomes 0: the check fails at every size.
__global__ void __launch_bounds__(THREADS)
    stream_v9_zfill_swapped_kernel(const std::uint32_t* __restrict__ d_in,
                                   std::uint32_t* __restrict__ d_out, std::size_t n_words) {
  constexpr int STAGES = 3;
  __shared__ alignas(16) std::uint32_t s_tiles[STAGES][TILE_WORDS];
  const std::size_t my_tiles = tiles_for_block(n_words);
  auto issue = [&](std::size_t k) {
    if (k < my_tiles) {
      const std::size_t base = tile_base(k);
      const int w = static_cast<int>(threadIdx.x) * VEC_WORDS;
      const int valid = tile_count(n_words, base) - w;
      if (valid > 0)  // BUG: valid bytes passed where the primitive wants bytes to zero
        __pipeline_memcpy_async(&s_tiles[k % STAGES][w], d_in + base + w, 16,
                                (valid < VEC_WORDS ? valid : VEC_WORDS) * 4);
    }
    __pipeline_commit();
  };
  for (int s = 0; s < STAGES - 1; ++s) issue(s);
  for (std::size_t k = 0; k < my_tiles; ++k) {
    __pipeline_wait_prior(STAGES - 2);
    __syncthreads();
    issue(k + STAGES - 1);
    consume_reverse(s_tiles[k % STAGES], d_out, tile_base(k), tile_count(n_words, tile_base(k)));
  }
}

// ---------------------------------------------------------------------------------------------
// Launchers: a persistent grid of blocks_per_sm x SMs blocks (0 = as many as fit).
// ---------------------------------------------------------------------------------------------
template <int STAGES>
void launch_stream_v0(const std::uint32_t* d_in, std::uint32_t* d_out, std::size_t n_words,
                      int sm_count, int blocks_per_sm, cudaStream_t s) {
  auto kernel = stream_v0_cuda_pipeline_kernel<STAGES>;
  const unsigned grid = tut::persistent_grid(kernel, THREADS, sm_count, blocks_per_sm);
  kernel<<<grid, THREADS, 0, s>>>(d_in, d_out, n_words);
}

template <int STAGES, int COPY_BYTES>
void launch_stream_v1(const std::uint32_t* d_in, std::uint32_t* d_out, std::size_t n_words,
                      int sm_count, int blocks_per_sm, cudaStream_t s) {
  auto kernel = stream_v1_primitives_kernel<STAGES, COPY_BYTES>;
  const unsigned grid = tut::persistent_grid(kernel, THREADS, sm_count, blocks_per_sm);
  kernel<<<grid, THREADS, 0, s>>>(d_in, d_out, n_words);
}

template <int STAGES>
void launch_stream_v2(const std::uint32_t* d_in, std::uint32_t* d_out, std::size_t n_words,
                      int sm_count, int blocks_per_sm, cudaStream_t s) {
  auto kernel = stream_v2_mbarrier_kernel<STAGES>;
  const unsigned grid = tut::persistent_grid(kernel, THREADS, sm_count, blocks_per_sm);
  kernel<<<grid, THREADS, 0, s>>>(d_in, d_out, n_words);
}

inline void launch_stream_v9(const std::uint32_t* d_in, std::uint32_t* d_out, std::size_t n_words,
                             int sm_count, int blocks_per_sm, cudaStream_t s) {
  auto kernel = stream_v9_zfill_swapped_kernel;
  const unsigned grid = tut::persistent_grid(kernel, THREADS, sm_count, blocks_per_sm);
  kernel<<<grid, THREADS, 0, s>>>(d_in, d_out, n_words);
}

// ---------------------------------------------------------------------------------------------
// The variant registry. Every variant runs at --blocks-per-sm blocks per SM (default 1): the
// regime where the number of stages in flight decides the bandwidth.
// ---------------------------------------------------------------------------------------------
inline std::vector<tut::Variant<Problem>> variants() {
  using V = tut::Variant<Problem>;
  std::vector<V> v;
  auto add = [&](const char* key, const char* name, const char* description,
                 void (*launch)(const std::uint32_t*, std::uint32_t*, std::size_t, int, int,
                                cudaStream_t)) {
    v.push_back(V{key, name, description, [launch](Problem& p, cudaStream_t s) {
                    launch(p.d_in.data(), p.d_out.data(), p.n_words, p.sms(), p.blocks_per_sm(), s);
                  }});
  };
  add("v0_pipeline_s4", "v0 cuda::pipeline 4-stage",
      "chapter 04: cuda::pipeline<thread_scope_thread>, memcpy_async 16 B, 4 stages",
      launch_stream_v0<4>);
  add("v1_prim16_s2", "v1 primitives 16 B 2-stage",
      "__pipeline_memcpy_async 16 B (cp.async.cg), double buffering", launch_stream_v1<2, 16>);
  add("v1_prim16_s3", "v1 primitives 16 B 3-stage",
      "__pipeline_memcpy_async 16 B (cp.async.cg), triple buffering", launch_stream_v1<3, 16>);
  add("v1_prim16_s4", "v1 primitives 16 B 4-stage",
      "__pipeline_memcpy_async 16 B, 4 stages: v0 written with primitives",
      launch_stream_v1<4, 16>);
  add("v1_prim8_s3", "v1 primitives 8 B 3-stage",
      "__pipeline_memcpy_async 8 B (cp.async.ca), two copies per thread per tile",
      launch_stream_v1<3, 8>);
  add("v1_prim4_s3", "v1 primitives 4 B 3-stage",
      "__pipeline_memcpy_async 4 B (cp.async.ca), four copies per thread per tile",
      launch_stream_v1<3, 4>);
  add("v2_mbarrier_s3", "v2 arrive_on mbarrier 3-stage",
      "16 B copies completed on an mbarrier per slot via __pipeline_arrive_on",
      launch_stream_v2<3>);
  add("v9_zfill_swapped", "v9 BROKEN: zfill given as src-size",
      "negative: passes the valid byte count as the zero-fill count; must FAIL", launch_stream_v9);
  v.back().negative = true;
  return v;
}

}  // namespace ch05
