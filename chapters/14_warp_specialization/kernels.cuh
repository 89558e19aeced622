// Chapter 14: warp specialization - one producer warp feeds TMA copies into a ring of shared
// memory slots, consumer warps compute on them, and two mbarriers per slot keep them in step
//
// What it teaches: splitting a block by role. Warp 0 is the producer: one of its lanes issues
// a 16 KiB cp.async.bulk (TMA, 1D) per tile into slot i % STAGES and never computes. Warps
// 1..4 are consumers: they wait for a slot to be full, read it into registers, hand the slot
// back, and spend --intensity multiply-adds per word on it. Per slot:
//   full[s]   count 1 + transaction bytes: the producer's arrive.expect_tx and the TMA's bytes
//   empty[s]  count CONSUMERS: every consumer thread arrives once it has read its share
// The copy engine and the FMA pipes then work at the same time, and each side only waits
// when the other is behind: the timeline argument of README.md.
//   v0        chapter 07's Ampere-style producer/consumer, rewritten here: a partitioned
//             block-scope cuda::pipeline, the producer warp's 32 lanes issuing cp.async
//   v1 sN     the warp-specialized TMA ring with STAGES = 2..6 (template instantiations)
//   v1 off16  the 4-stage ring placed 16 bytes off a 128-byte boundary (alignment test)
//   v9        (negative) a consumer that releases its slot before reading it
// Data: 32-bit words; each consumer step is x = x * 1664525 + 1013904223 (an LCG, one IMAD),
// repeated --intensity times. The composition of n such steps is again x * a_n + c_n, so the
// CPU reference is one multiply-add per word and the check is exact.
//
// Minimum compute capability: 9.0 (cp.async.bulk, mbarrier transaction counts).
// Run:    build/bin/ch14_warp_specialization [--intensity=32] [--blocks-per-sm=1] [--size=1G]
// Output: the harness table (GB/s of words read + written), then an intensity sweep.
#pragma once

#include <cooperative_groups.h>
#include <cuda/pipeline>
#include <cuda/ptx>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/device_buffer.cuh"
#include "common/harness.cuh"

namespace ch14 {

// ---------------------------------------------------------------------------------------------
// Constants
// ---------------------------------------------------------------------------------------------
constexpr int CONSUMER_WARPS = 4;
constexpr int CONSUMERS = CONSUMER_WARPS * 32;          // 128 consumer threads
constexpr int THREADS = 32 + CONSUMERS;                 // warp 0 produces, warps 1..4 consume
constexpr int TILE_BYTES = 16384;                       // one slot: 16 KiB
constexpr int TILE_VECS = TILE_BYTES / 16;              // 1024 x 16-byte words
constexpr int TILE_WORDS = TILE_BYTES / 4;              // 4096 x 32-bit words
constexpr int VECS_PER_CONSUMER = TILE_VECS / CONSUMERS;  // 8 uint4 = 32 words per thread
constexpr std::uint32_t LCG_A = 1664525u, LCG_C = 1013904223u;
// A bounded wait gives up after this long (the negative variant and bugs must not hang).
constexpr unsigned long long WAIT_TIMEOUT_NS = 2000000000ull;  // 2 s
static_assert(TILE_VECS % CONSUMERS == 0, "every consumer thread takes the same share");
// v1's dynamic shared memory: the ring plus room to move it to a 128-byte boundary (+ 16).
constexpr int RING_PAD_BYTES = 256;

/// Elements (16-byte vectors) of tile `tile`: TILE_VECS, or fewer for the last one.
__host__ __device__ inline int tile_vecs(std::size_t n_vecs, std::size_t tile) {
  const std::size_t left = n_vecs - tile * TILE_VECS;
  return static_cast<int>(left < TILE_VECS ? left : TILE_VECS);
}

/// The consumers' work on one word: `intensity` dependent IMADs (32 independent chains per
/// thread, so the FMA pipe, not the latency of one chain, is the limit).
__device__ __forceinline__ std::uint32_t consume_word(std::uint32_t x, int intensity) {
  for (int i = 0; i < intensity; ++i) x = x * LCG_A + LCG_C;
  return x;
}

/// Compute and store the 8 vectors a consumer thread read from tile `tile`.
__device__ __forceinline__ void consume_and_store(uint4 (&r)[VECS_PER_CONSUMER], uint4* d_out,
                                                  std::size_t tile, int count, int c,
                                                  int intensity) {
  for (int i = 0; i < intensity; ++i) {  // the loop over the 32 words is the inner one: ILP
#pragma unroll
    for (int j = 0; j < VECS_PER_CONSUMER; ++j) {
      r[j].x = r[j].x * LCG_A + LCG_C;
      r[j].y = r[j].y * LCG_A + LCG_C;
      r[j].z = r[j].z * LCG_A + LCG_C;
      r[j].w = r[j].w * LCG_A + LCG_C;
    }
  }
#pragma unroll
  for (int j = 0; j < VECS_PER_CONSUMER; ++j) {
    const int v = c + j * CONSUMERS;
    if (v < count) d_out[tile * TILE_VECS + v] = r[j];
  }
}

/// Read this thread's share of a slot: vectors c, c+128, ... (a warp reads 512 contiguous
/// bytes per step: conflict-free LDS.128).
__device__ __forceinline__ void read_slot(const uint4* s_slot, uint4 (&r)[VECS_PER_CONSUMER],
                                          int count, int c) {
#pragma unroll
  for (int j = 0; j < VECS_PER_CONSUMER; ++j) {
    const int v = c + j * CONSUMERS;
    r[j] = v < count ? s_slot[v] : make_uint4(0, 0, 0, 0);
  }
}

// ---------------------------------------------------------------------------------------------
// v0: Ampere-style producer/consumer with a partitioned block-scope cuda::pipeline
// ---------------------------------------------------------------------------------------------
// The same roles as v1, with the tools sm_80 has: the 32 producer lanes each issue 32
// cp.async of 16 bytes per tile (LDGSTS), producer_commit makes the stage's "produced"
// barrier track them, and the consumers' consumer_release arrives on its "consumed" barrier.
// The pipeline keeps the slot index and both phase bits itself (head/tail, parities).
template <int NSTAGES>
__global__ void __launch_bounds__(THREADS)
    ws_v0_pipeline_kernel(const uint4* __restrict__ d_in, uint4* __restrict__ d_out,
                          std::size_t n_vecs, int intensity) {
  extern __shared__ uint4 s_ring[];  // NSTAGES x [TILE_VECS] x 16 B
  // LESSON: the shared state's constructor is trivial in practice, but nvcc flags any
  // __shared__ object with a constructor (#20054); the pipeline docs declare it this way.
#pragma nv_diag_suppress static_var_with_dynamic_init
  __shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, NSTAGES> state;
#pragma nv_diag_default static_var_with_dynamic_init
  const auto block = cooperative_groups::this_thread_block();
  const bool is_producer = threadIdx.x < 32;
  // make_pipeline with a role: init of the per-stage barriers by the block (it syncs).
  auto pipe = cuda::make_pipeline(block, &state,
                                  is_producer ? cuda::pipeline_role::producer
                                              : cuda::pipeline_role::consumer);
  const std::size_t num_tiles = (n_vecs + TILE_VECS - 1) / TILE_VECS;
  int i = 0;
  for (std::size_t tile = blockIdx.x; tile < num_tiles; tile += gridDim.x, ++i) {
    uint4* s_slot = s_ring + (i % NSTAGES) * TILE_VECS;
    const int count = tile_vecs(n_vecs, tile);
    if (is_producer) {
      pipe.producer_acquire();  // waits until the consumers released this slot's last tile
      for (int v = threadIdx.x; v < count; v += 32)
        cuda::memcpy_async(s_slot + v, d_in + tile * TILE_VECS + v, cuda::aligned_size_t<16>(16),
                           pipe);
      pipe.producer_commit();
    } else {
      const int c = threadIdx.x - 32;
      uint4 r[VECS_PER_CONSUMER];
      pipe.consumer_wait();  // slot i % NSTAGES holds tile `tile`
      read_slot(s_slot, r, count, c);
      pipe.consumer_release();  // the reads are in registers: the slot may be refilled
      consume_and_store(r, d_out, tile, count, c, intensity);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Bounded mbarrier wait
// ---------------------------------------------------------------------------------------------
__device__ __forceinline__ unsigned long long globaltimer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

/// Wait until the phase of `bar` with parity `parity` has completed (mbarrier.try_wait.parity
/// suspends the thread for a while in hardware; the loop re-polls). Gives up after
/// WAIT_TIMEOUT_NS, raises *d_timed_out and returns false: a bug shows up as a failed check
/// with the poison left in place, not as a hung GPU.
__device__ __forceinline__ bool bounded_wait(std::uint64_t* bar, std::uint32_t parity,
                                             int* d_timed_out) {
  if (cuda::ptx::mbarrier_try_wait_parity(bar, parity)) return true;
  const unsigned long long start = globaltimer_ns();
  while (!cuda::ptx::mbarrier_try_wait_parity(bar, parity)) {
    if (globaltimer_ns() - start > WAIT_TIMEOUT_NS) {
      atomicExch(d_timed_out, 1);
      return false;
    }
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// v1: warp-specialized TMA ring, NSTAGES slots (v9: the same with the early-release bug)
// ---------------------------------------------------------------------------------------------
// Phase invariants (i = the block's tile counter, slot = i % NSTAGES, round = i / NSTAGES):
//   full[slot]  completes phase `round` when tile i has landed in the slot;
//               consumers wait on parity round & 1.
//   empty[slot] completes phase `round` when all CONSUMERS threads have read tile i out of
//               it (each thread arrives after its own reads: no reasoning about other lanes);
//               before writing round r >= 1 into the slot the producer waits on parity
//               (r - 1) & 1. Round 0 needs no wait: every slot starts free.
// Parity (one bit) is enough because neither side can get two phases ahead of the other:
// the producer cannot refill a slot the consumers have not released, and the consumers
// cannot release a tile that has not landed.
//
// Ring placement: the dynamic shared memory starts right after the static full/empty arrays
// (16 x NSTAGES bytes), so its offset depends on NSTAGES: 32-byte aligned for even counts,
// only 16-byte aligned for odd ones (suspected cause of the odd/even split in run
// 2026-11-30-h200-a; see README.md). The ring is therefore placed at the next 128-byte
// boundary, plus RING_OFFSET bytes: 0 normally, 16 in the variant that tests the suspicion.
template <int NSTAGES, bool EARLY_RELEASE, int RING_OFFSET = 0>
__global__ void __launch_bounds__(THREADS)
    ws_v1_tma_kernel(const uint4* __restrict__ d_in, uint4* __restrict__ d_out,
                     std::size_t n_vecs, int intensity, int* d_timed_out) {
  namespace ptx = cuda::ptx;
  static_assert(RING_OFFSET % 16 == 0, "cp.async.bulk needs a 16-byte aligned destination");
  extern __shared__ __align__(16) unsigned char s_raw[];  // NSTAGES x 16 KiB + RING_PAD_BYTES
  __shared__ std::uint64_t full[NSTAGES], empty[NSTAGES];
  // Offset added to s_raw itself, so the compiler still knows the ring is shared (LDS).
  const unsigned misalign = static_cast<unsigned>(__cvta_generic_to_shared(s_raw)) & 127u;
  uint4* s_ring = reinterpret_cast<uint4*>(s_raw + ((128u - misalign) & 127u) + RING_OFFSET);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const std::size_t num_tiles = (n_vecs + TILE_VECS - 1) / TILE_VECS;

  if (threadIdx.x == 0) {
    for (int s = 0; s < NSTAGES; ++s) {
      ptx::mbarrier_init(&full[s], 1);                // the producer's arrive.expect_tx
      ptx::mbarrier_init(&empty[s], CONSUMERS);       // one arrive per consumer thread
    }
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);  // visible to the TMA unit
  }
  __syncthreads();  // the last block-wide barrier: from here on the roles only meet at mbarriers

  if (warp == 0) {
    // ---- producer: one lane issues every copy; the other 31 have nothing to do ----
    if (lane != 0) return;
    int i = 0;
    for (std::size_t tile = blockIdx.x; tile < num_tiles; tile += gridDim.x, ++i) {
      const int slot = i % NSTAGES;
      const std::uint32_t round = static_cast<std::uint32_t>(i / NSTAGES);
      if (round > 0 && !bounded_wait(&empty[slot], (round - 1) & 1u, d_timed_out)) return;
      // empty[slot] phase round-1 is complete (or round 0): nobody reads the slot any more
      // EXERCISE-BEGIN: announce the tile's bytes on full[slot], then hand the 16 KiB copy to the TMA
      const std::uint32_t bytes = static_cast<std::uint32_t>(tile_vecs(n_vecs, tile)) * 16u;
      // expect_tx first, then the copy: the phase cannot complete before the bytes are owed.
      ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared,
                                     &full[slot], bytes);
      ptx::cp_async_bulk(ptx::space_shared, ptx::space_global, s_ring + slot * TILE_VECS,
                         d_in + tile * TILE_VECS, bytes, &full[slot]);
      // EXERCISE-END
    }
    return;
  }

  // ---- consumers: warps 1..CONSUMER_WARPS ----
  const int c = threadIdx.x - 32;
  int i = 0;
  for (std::size_t tile = blockIdx.x; tile < num_tiles; tile += gridDim.x, ++i) {
    const int slot = i % NSTAGES;
    const std::uint32_t round = static_cast<std::uint32_t>(i / NSTAGES);
    const int count = tile_vecs(n_vecs, tile);
    const uint4* s_slot = s_ring + slot * TILE_VECS;
    uint4 r[VECS_PER_CONSUMER];
    // A thread that gives up leaves without arriving on empty[slot], so the producer's wait
    // gives up too: a bug ends in a failed check, never a hang.
    if (!bounded_wait(&full[slot], round & 1u, d_timed_out)) return;
    // full[slot] phase `round` is complete: slot holds tile i (try_wait acquires the TMA's bytes)
    if (EARLY_RELEASE) {
      // BUG: hand the slot back before reading it. To make the race deterministic, this
      // consumer then waits until the producer has really overwritten the slot with the
      // next tile it maps to (if the block has one), and only then reads: it gets tile
      // i + NSTAGES instead of tile i.
      ptx::mbarrier_arrive(&empty[slot]);
      const bool overwritten = tile + static_cast<std::size_t>(NSTAGES) * gridDim.x < num_tiles;
      const bool landed = !overwritten || bounded_wait(&full[slot], (round + 1) & 1u, d_timed_out);
      if (!landed) return;
      read_slot(s_slot, r, count, c);
    } else {
      read_slot(s_slot, r, count, c);
      // Release the slot. Each thread vouches only for its own reads (no __syncwarp and no
      // lane-to-lane argument): the 128th arrive completes the phase, and the producer's
      // wait acquires it. But the next write into the slot comes from the TMA unit - the
      // async proxy - and the arrive's release orders these reads only for the generic
      // proxy. read_slot's LDS results are not used before the arrive, so they can still be
      // in flight when the producer's next cp.async.bulk lands: run 2026-11-30-h200-b, without
      // this fence, saw 184 words of the NEXT round's tile in the output (6 stages, 1 GiB).
      // fence.proxy.async orders the reads before the release for both proxies.
      // EXERCISE-BEGIN: release the slot: fence this thread's reads against the async proxy, then arrive on empty[slot]
      ptx::fence_proxy_async(ptx::space_shared);
      ptx::mbarrier_arrive(&empty[slot]);
      // EXERCISE-END
    }
    consume_and_store(r, d_out, tile, count, c, intensity);
  }
}

// ---------------------------------------------------------------------------------------------
// Launchers: a persistent grid of blocks_per_sm x SMs blocks (capped at what fits)
// ---------------------------------------------------------------------------------------------
template <int NSTAGES>
void launch_ws_v0(const uint4* d_in, uint4* d_out, std::size_t n_vecs, int intensity,
                  int sm_count, int blocks_per_sm, cudaStream_t s) {
  constexpr int smem = NSTAGES * TILE_BYTES;
  const unsigned grid =
      tut::persistent_grid(ws_v0_pipeline_kernel<NSTAGES>, THREADS, sm_count, blocks_per_sm, smem);
  ws_v0_pipeline_kernel<NSTAGES><<<grid, THREADS, smem, s>>>(d_in, d_out, n_vecs, intensity);
}

template <int NSTAGES, bool EARLY_RELEASE = false, int RING_OFFSET = 0>
void launch_ws_v1(const uint4* d_in, uint4* d_out, std::size_t n_vecs, int intensity,
                  int sm_count, int blocks_per_sm, int* d_timed_out, cudaStream_t s) {
  constexpr int smem = NSTAGES * TILE_BYTES + RING_PAD_BYTES;
  const auto kernel = ws_v1_tma_kernel<NSTAGES, EARLY_RELEASE, RING_OFFSET>;
  const unsigned grid = tut::persistent_grid(kernel, THREADS, sm_count, blocks_per_sm, smem);
  kernel<<<grid, THREADS, smem, s>>>(d_in, d_out, n_vecs, intensity, d_timed_out);
}

// ---------------------------------------------------------------------------------------------
// CPU reference: n LCG steps compose to one affine map x -> a_n * x + c_n (mod 2^32).
// ---------------------------------------------------------------------------------------------
inline std::vector<std::uint32_t> reference_lcg(const std::vector<std::uint32_t>& in,
                                                int intensity) {
  std::uint32_t a = 1u, c = 0u;  // identity
  for (int i = 0; i < intensity; ++i) {  // (x*a + c)*A + C = x*(a*A) + (c*A + C)
    a *= LCG_A;
    c = c * LCG_A + LCG_C;
  }
  std::vector<std::uint32_t> out(in.size());
  for (std::size_t k = 0; k < in.size(); ++k) out[k] = in[k] * a + c;
  return out;
}

// ---------------------------------------------------------------------------------------------
// The problem: `size` bytes in, `size` bytes out, as 32-bit words. Bytes moved: 2 * size.
// ---------------------------------------------------------------------------------------------
struct Problem {
  explicit Problem(const tut::RunConfig& cfg)
      : cfg(cfg), n_words(cfg.size / 4), intensity(static_cast<int>(cfg.extra("intensity"))),
        d_in(n_words), d_out(n_words), d_timed_out(1) {
    h_in.resize(n_words);
    tut::fill_unique_words(h_in.data(), n_words, cfg.seed);  // an LCG step is a bijection:
    d_in.upload(h_in);                                       // unique in, unique out
  }
  void poison(cudaStream_t s) {
    d_out.poison(s);
    CUDA_CHECK(cudaMemsetAsync(d_timed_out.data(), 0, sizeof(int), s));
  }
  tut::VerifyResult verify(cudaStream_t s, int /*reference*/) {
    if (want.empty()) want = reference_lcg(h_in, intensity);
    const std::vector<std::uint32_t> got = d_out.download(s);
    tut::VerifyResult r = tut::compare_exact_words(got.data(), want.data(), n_words);
    if (d_timed_out.download(s)[0] != 0) {  // a wait gave up: fail even if the data looks right
      r.mismatches += r.mismatches == 0 ? 1 : 0;
      r.what += " (a bounded mbarrier wait timed out)";
    }
    return r;
  }
  double work() const { return 2.0 * static_cast<double>(cfg.size); }
  std::string describe() const {
    return tut::format_bytes(double(cfg.size)) + " per buffer, intensity " +
           std::to_string(intensity);
  }

  const uint4* in() const { return reinterpret_cast<const uint4*>(d_in.data()); }
  uint4* out() { return reinterpret_cast<uint4*>(d_out.data()); }
  std::size_t n_vecs() const { return n_words / 4; }
  int sms() const { return cfg.device.sm_count; }
  int blocks_per_sm() const { return static_cast<int>(cfg.extra("blocks-per-sm")); }

  tut::RunConfig cfg;
  std::size_t n_words;
  int intensity;
  tut::DeviceBuffer<std::uint32_t> d_in, d_out;
  tut::DeviceBuffer<int> d_timed_out;
  std::vector<std::uint32_t> h_in, want;
};

// ---------------------------------------------------------------------------------------------
// The variant registry
// ---------------------------------------------------------------------------------------------
template <int NSTAGES>
tut::Variant<Problem> ws_variant() {
  const std::string n = std::to_string(NSTAGES);
  return tut::Variant<Problem>{
      "v1_ws_s" + n, "v1 warp-spec TMA " + n + "-stage",
      "1 producer warp (TMA 16 KiB bulk copies) + 4 consumer warps, " + n + " slots",
      [](Problem& p, cudaStream_t s) {
        launch_ws_v1<NSTAGES>(p.in(), p.out(), p.n_vecs(), p.intensity, p.sms(),
                              p.blocks_per_sm(), p.d_timed_out.data(), s);
      }};
}

inline std::vector<tut::Variant<Problem>> variants() {
  using V = tut::Variant<Problem>;
  std::vector<V> v;
  v.push_back(V{"v0_pipeline", "v0 cuda::pipeline 4-stage",
                "Ampere-style: producer warp's 32 lanes cp.async 16 B, block-scope pipeline",
                [](Problem& p, cudaStream_t s) {
                  launch_ws_v0<4>(p.in(), p.out(), p.n_vecs(), p.intensity, p.sms(),
                                  p.blocks_per_sm(), s);
                }});
  v.push_back(ws_variant<2>());
  v.push_back(ws_variant<3>());
  v.push_back(ws_variant<4>());
  v.push_back(ws_variant<5>());
  v.push_back(ws_variant<6>());
  v.push_back(V{"v1_ws_s4_off16", "v1 TMA 4-stage, ring at +16 B",
                "v1 4-stage with the ring 16 bytes past a 128-byte boundary (alignment test)",
                [](Problem& p, cudaStream_t s) {
                  launch_ws_v1<4, false, 16>(p.in(), p.out(), p.n_vecs(), p.intensity, p.sms(),
                                             p.blocks_per_sm(), p.d_timed_out.data(), s);
                }});
  v.push_back(V{"v9_early_release", "v9 BROKEN: release before read",
                "negative: consumers free the slot, then read the overwritten data; must FAIL",
                [](Problem& p, cudaStream_t s) {
                  // One block, so every slot is reused as soon as there are > 4 tiles.
                  launch_ws_v1<4, true>(p.in(), p.out(), p.n_vecs(), p.intensity, 1, 1,
                                        p.d_timed_out.data(), s);
                }});
  v.back().negative = true;
  return v;
}

}  // namespace ch14
