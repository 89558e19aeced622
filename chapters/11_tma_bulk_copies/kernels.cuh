// Chapter 11: TMA bulk copies (1D) - one thread moves a whole 16 KiB tile
//
// What it adds over the cp.async chapters: on Hopper the Tensor Memory Accelerator (TMA) copies
// a contiguous block of global memory into shared memory by itself. ONE thread issues
// `cp.async.bulk` for the whole tile (SASS UBLKCP.S.G); the TMA unit streams the bytes and,
// as they land, decrements the transaction count of an mbarrier in shared memory. Consumers
// wait on that mbarrier's phase bit (`mbarrier.try_wait.parity`) instead of each thread
// tracking its own commit groups. No register holds the data, no thread spends issue slots on
// per-16-byte copies, and the bytes in flight no longer scale with the number of threads.
//
// Workload (the same as chapters 01 and 06, so numbers compare): a tile-through-shared copy in
// which every 4 KiB sub-tile is written out in reverse 16-byte order, so the data really passes
// through shared memory. The TMA tile is 16 KiB (four 4 KiB sub-tiles).
//
// Each mechanism is taught twice: v1 in raw inline PTX (you see every instruction), v2 with
// CCCL's cuda::ptx wrappers (the same instructions, typed; the same ring). v3 adds the bulk STORE
// (shared -> global, bulk_group completion) and the fence.proxy.async rule. v4 shows
// cuda::memcpy_async + cuda::barrier, which on sm_90 with 16-byte alignment becomes the same
// cp.async.bulk. v5-v7 run v1's ring in other shapes (8 x 16 KiB, 4 x 32 KiB, 16 x 4 KiB) to
// separate bytes in flight from slot granularity at one block per SM. v8/v9 are deliberately
// broken: wrong expect_tx byte count, wrong parity. ring_helpers.cuh holds the bookkeeping
// (grid-stride tiles, ring phases, the bounded wait, the error word) that chapters 12-13 reuse.
//
// Minimum compute capability: 9.0 (cp.async.bulk and mbarrier transaction counts are sm_90).
// Run:    build/bin/ch11_tma_bulk_copies [--blocks-per-sm=N] [--size=1G] [--list]
// Output: the harness table (median/min ms, GB/s, % of the memcpy ceiling, vs v0, check).
#pragma once

#include <cuda/barrier>
#include <cuda/ptx>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "chapters/11_tma_bulk_copies/ring_helpers.cuh"  // from the root: the exercise finds it
#include "common/device_buffer.cuh"
#include "common/harness.cuh"

namespace ch11 {

// ---------------------------------------------------------------------------------------------
// Constants
// ---------------------------------------------------------------------------------------------
constexpr int THREADS = 256;                       // threads per block, every kernel here
constexpr int WARPS = THREADS / 32;
constexpr int SUB_VECS = 256;                      // reversal unit: 256 x 16 B = 4 KiB
constexpr int CPA_TILE_VECS = THREADS;             // v0: one 16 B cp.async per thread = 4 KiB
constexpr int CPA_STAGES = 8;                      // v0: 8 x 4 KiB ring (chapter 06's best)
constexpr int TMA_TILE_VECS = 1024;                // v1..v4: 1024 x 16 B = 16 KiB per bulk copy
constexpr int TMA_TILE_BYTES = TMA_TILE_VECS * 16;
constexpr int TMA_STAGES = 4;                      // 4 x 16 KiB = 64 KiB ring
constexpr int VECS_PER_THREAD = TMA_TILE_VECS / THREADS;  // 4
static_assert(TMA_TILE_VECS % SUB_VECS == 0, "a TMA tile holds whole reversal sub-tiles");

// Every mbarrier wait here is bounded (ring_helpers.cuh: it gives up after about 1 s). The
// thread that gives up records why in the device error word and leaves the poison:
constexpr unsigned kErrFullTimeout = 1u;   // a consumer never saw its tile land
constexpr unsigned kErrEmptyTimeout = 2u;  // the producer never saw a slot released

// Vectors in the tile of `tile_vecs` that starts at `base` (fewer for the last tile).
__host__ __device__ inline int tile_count(std::size_t n_vecs, std::size_t base, int tile_vecs) {
  const std::size_t left = n_vecs - base;
  return static_cast<int>(left < static_cast<std::size_t>(tile_vecs) ? left : tile_vecs);
}

// Output vector i of a tile with `count` vectors reads input vector reversed_source(i): each
// 4 KiB sub-tile (the last one possibly partial) is reversed within itself.
__host__ __device__ inline int reversed_source(int i, int count) {
  const int sub = i - i % SUB_VECS;
  const int cnt = count - sub < SUB_VECS ? count - sub : SUB_VECS;
  return sub + cnt - 1 - (i - sub);
}

// The consumer step of every TMA variant: thread t copies vectors t, t + THREADS, ... of a
// tile of `count` vectors from its slot `s_tile` to `dst` (global: LDS.128 -> STG.128; v3's
// staging buffer: LDS.128 -> STS.128), each sub-tile reversed.
template <int PER_THREAD>
__device__ inline void copy_tile_reversed(int4* dst, const int4* s_tile, int count) {
#pragma unroll
  for (int q = 0; q < PER_THREAD; ++q) {
    const int i = q * THREADS + static_cast<int>(threadIdx.x);
    if (i < count) dst[i] = s_tile[reversed_source(i, count)];
  }
}

// ---------------------------------------------------------------------------------------------
// The 16-byte rules, checked on the host before any bulk copy is launched.
// ---------------------------------------------------------------------------------------------
// cp.async.bulk needs: source and destination addresses 16-byte aligned, size a multiple of
// 16 bytes (PTX ISA, "cp.async.bulk"). Breaking them is undefined behaviour on the device (an
// illegal-instruction or misaligned-address error at best), so the launchers refuse up front.
inline std::string bulk_copy_violation(const void* dst, const void* src, std::size_t bytes) {
  if (reinterpret_cast<std::uintptr_t>(src) % 16 != 0)
    return "source address is not 16-byte aligned";
  if (reinterpret_cast<std::uintptr_t>(dst) % 16 != 0)
    return "destination address is not 16-byte aligned";
  if (bytes % 16 != 0) return "size " + std::to_string(bytes) + " is not a multiple of 16 bytes";
  return "";
}

inline void require_bulk_copy_rules(const void* dst, const void* src, std::size_t bytes) {
  const std::string why = bulk_copy_violation(dst, src, bytes);
  if (why.empty()) return;
  std::fprintf(stderr,
               "ch11: error: cp.async.bulk needs 16-byte aligned addresses and a size that is a "
               "multiple of 16 bytes: %s\n", why.c_str());
  std::exit(tut::kExitFail);
}

// ---------------------------------------------------------------------------------------------
// Raw PTX building blocks (v1, v5-v7 and the negatives). Shared-memory operands are 32-bit
// shared-window addresses (smem_addr: __cvta_generic_to_shared), as the instructions expect.
// The ring below is written against this set of six; v2 hands it CcclPtx, the same six
// instructions spelled with cuda::ptx.
// ---------------------------------------------------------------------------------------------
struct RawPtx {
  // mbarrier.init: expected arrivals per phase = count; phase 0 is current; tx-count = 0.
  static __device__ void mbarrier_init(std::uint64_t* bar, std::uint32_t count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(count)
                 : "memory");
  }

  // Orders this thread's earlier ordinary (generic-proxy) shared-memory accesses before later
  // accesses by the async proxy (the TMA unit). The ring needs it twice: after initialising
  // the barriers the TMA will update, and after reading a slot the TMA will refill.
  static __device__ void fence_proxy_async_shared() {
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  }

  // One arrival, and tx-count += bytes: "this phase also waits for `bytes` bytes to land".
  static __device__ void arrive_expect_tx(std::uint64_t* bar, std::uint32_t bytes) {
    asm volatile("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [%0], %1;"
                 ::"r"(smem_addr(bar)), "r"(bytes) : "memory");
  }

  // One arrival, no transaction bytes (a consumer releasing a slot).
  static __device__ void arrive(std::uint64_t* bar) {
    asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];" ::"r"(smem_addr(bar))
                 : "memory");
  }

  // The TMA copy: `bytes` from global `src` to shared `dst`; as they land the TMA unit performs
  // complete_tx on `bar` (tx-count -= bytes landed).
  static __device__ void bulk_load(void* dst, const void* src, std::uint32_t bytes,
                                   std::uint64_t* bar) {
    asm volatile(
        "cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
        ::"r"(smem_addr(dst)), "l"(src), "r"(bytes), "r"(smem_addr(bar)) : "memory");
  }

  // true once the phase with parity `parity` has completed (acquire: the landed bytes are then
  // visible to this thread). The hardware may suspend the thread for a while before saying no.
  // The ring loops on it with a budget (wait_bounded, ring_helpers.cuh).
  static __device__ bool try_wait_parity(std::uint64_t* bar, std::uint32_t parity) {
    std::uint32_t done;
    asm volatile(
        "{\n\t.reg .pred p;\n\t"
        "mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 p, [%1], %2;\n\t"
        "selp.u32 %0, 1, 0, p;\n\t}"
        : "=r"(done) : "r"(smem_addr(bar)), "r"(parity) : "memory");
    return done != 0;
  }
};

// ---------------------------------------------------------------------------------------------
// v0: chapter 06's best - an 8-stage cp.async ring, every thread copies 16 B per 4 KiB tile
// ---------------------------------------------------------------------------------------------
// Copied here so "vs v0" is measured in the same run. Each thread issues LDGSTS for its own
// 16 bytes, groups them per tile with commit_group and bounds the in-flight tiles with
// wait_group; __syncthreads() makes every thread's copy visible to the block.
__global__ void __launch_bounds__(THREADS)
    stream_v0_cpasync_kernel(const int4* __restrict__ d_in, int4* __restrict__ d_out,
                             std::size_t n_vecs) {
  __shared__ alignas(16) int4 s_ring[CPA_STAGES][CPA_TILE_VECS];  // [8][256] x 16 B = 32 KiB
  const int t = threadIdx.x;
  const std::size_t num_tiles = (n_vecs + CPA_TILE_VECS - 1) / CPA_TILE_VECS;
  const std::size_t my_tiles = tiles_of_this_block(num_tiles);
  auto issue = [&](std::size_t j) {  // tile j of this block -> slot j % STAGES, then commit
    if (j < my_tiles) {
      const std::size_t base = block_tile(j) * CPA_TILE_VECS;
      if (t < tile_count(n_vecs, base, CPA_TILE_VECS))
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(
                         smem_addr(&s_ring[j % CPA_STAGES][t])),
                     "l"(d_in + base + t)
                     : "memory");
    }
    asm volatile("cp.async.commit_group;" ::: "memory");  // empty groups keep the count uniform
  };
  // prologue: fill STAGES-1 slots
  for (int j = 0; j < CPA_STAGES - 1; ++j) issue(j);
  // steady state
  for (std::size_t j = 0; j < my_tiles; ++j) {
    issue(j + CPA_STAGES - 1);  // into slot (j-1) % STAGES, released by last iteration's barrier
    // j + STAGES groups committed; allowing STAGES-1 pending means groups 0..j are complete:
    // this thread's 16 B of tile j have landed.
    asm volatile("cp.async.wait_group %0;" ::"n"(CPA_STAGES - 1) : "memory");
    __syncthreads();  // ... and every other thread's: slot j % STAGES holds tile j
    const std::size_t base = block_tile(j) * CPA_TILE_VECS;
    const int count = tile_count(n_vecs, base, CPA_TILE_VECS);
    if (t < count) d_out[base + t] = s_ring[j % CPA_STAGES][reversed_source(t, count)];
    __syncthreads();  // slot j % STAGES consumed before the next issue overwrites it
  }
  asm volatile("cp.async.wait_all;" ::: "memory");  // epilogue: drain the empty groups
}

// ---------------------------------------------------------------------------------------------
// v1: cp.async.bulk ring in raw PTX - one producer thread, full/empty mbarrier pairs
// ---------------------------------------------------------------------------------------------
// Shared memory: STAGES slots of 16 KiB (dynamic), and per slot two mbarriers:
//   full[s]   count 1  - the producer's arrive.expect_tx, plus the tile's bytes (tx-count):
//                        phase n completes when tile j = s + n*STAGES has landed in slot s.
//   empty[s]  count 8  - one arrival per warp after it has read the slot:
//                        phase n completes when every warp has consumed tile s + n*STAGES.
// PHASE-TRACKING INVARIANT (j = this block's tile number, s = j % STAGES, n = j / STAGES):
//   consumer of tile j waits full[s]  with parity n & 1        (phase n: tile j landed)
//   producer of tile j waits empty[s] with parity (n & 1) ^ 1  (phase n-1: tile j-STAGES read)
// For n = 0 the producer waits on parity 1 of a fresh barrier: "the phase before phase 0",
// which counts as complete, so the prologue passes straight through. Forgetting the ^ 1 is
// variant v9's bug.
enum class Bug { kNone, kWrongTxCount, kWrongParity };

// The ring is written once, as a device function templated on the instruction spelling I
// (RawPtx for v1, CcclPtx for v2) and on its shape (STAGES slots of TILE_VECS x 16 B), so v1
// (4 x 16 KiB), v2 and v5-v7 (other ring shapes, below) run the same code.
template <class I, Bug BUG, int STAGES, int TILE_VECS>
__device__ inline void bulk_ring(int4* s_ring, std::uint64_t* full, std::uint64_t* empty,
                                 const int4* __restrict__ d_in, int4* __restrict__ d_out,
                                 std::size_t n_vecs, unsigned* d_error) {
  static_assert(TILE_VECS % SUB_VECS == 0 && TILE_VECS % THREADS == 0, "whole sub-tiles");
  const int t = threadIdx.x;
  const std::size_t num_tiles = (n_vecs + TILE_VECS - 1) / TILE_VECS;
  const std::size_t my_tiles = tiles_of_this_block(num_tiles);
  auto wait = [](std::uint64_t* bar, std::uint32_t parity) {  // gives up after about 1 s
    return wait_bounded([&] { return I::try_wait_parity(bar, parity); });
  };

  if (t == 0) {
    for (int s = 0; s < STAGES; ++s) {
      I::mbarrier_init(&full[s], 1);
      I::mbarrier_init(&empty[s], WARPS);
    }
    I::fence_proxy_async_shared();  // the initialisation -> visible to the TMA unit
  }
  __syncthreads();  // nobody touches a barrier before it is initialised

  // Producer step for tile j (thread 0 only): wait until the slot is free, announce the bytes,
  // hand the copy to the TMA unit. Records a timeout and returns false if the slot never
  // became free.
  auto produce = [&](std::size_t j) -> bool {
    const int s = static_cast<int>(j % STAGES);
    // phase n-1 of empty[s] (n = j / STAGES): tile j - STAGES has been read
    const std::uint32_t parity =
        BUG == Bug::kWrongParity ? ring_parity<STAGES>(j) : ring_parity<STAGES>(j) ^ 1;
    if (!wait(&empty[s], parity)) {
      atomicOr(d_error, kErrEmptyTimeout);
      return false;
    }
    const std::size_t base = block_tile(j) * TILE_VECS;
    const std::uint32_t bytes = 16u * tile_count(n_vecs, base, TILE_VECS);
    // BUG kWrongTxCount: announces 16 bytes more than the copy delivers, so tx-count never
    // returns to zero and the phase never completes.
    // EXERCISE-BEGIN: one arrival on full[s] that also expects `bytes` bytes (arrive.expect_tx), then hand the copy of `bytes` from d_in + base into slot s to the TMA unit, completing on full[s]
    I::arrive_expect_tx(&full[s], BUG == Bug::kWrongTxCount ? bytes + 16 : bytes);
    I::bulk_load(s_ring + s * TILE_VECS, d_in + base, bytes, &full[s]);
    // EXERCISE-END
    return true;
  };

  // prologue: the producer fills up to STAGES slots (its empty-waits pass at once); if one
  // fails, the consumers time out on full[] and return as well: the poison stays
  if (t == 0)
    for (std::size_t j = 0; j < my_tiles && j < STAGES; ++j)
      if (!produce(j)) return;

  // steady state: consume tile j, release its slot, refill it with tile j + STAGES
  for (std::size_t j = 0; j < my_tiles; ++j) {
    const int s = static_cast<int>(j % STAGES);
    if (!wait(&full[s], ring_parity<STAGES>(j))) {  // phase n of full[s]: tile j landed
      atomicOr(d_error, kErrFullTimeout);
      return;
    }
    // slot s holds tile j (all its bytes are visible: try_wait has acquire semantics)
    const std::size_t base = block_tile(j) * TILE_VECS;
    copy_tile_reversed<TILE_VECS / THREADS>(d_out + base, s_ring + s * TILE_VECS,
                                            tile_count(n_vecs, base, TILE_VECS));
    // Release slot s. Its next write is the TMA's refill (async proxy), but the reads above are
    // ordinary loads (generic proxy), and the arrive's release orders them for the generic
    // proxy only. So each thread first fences its own reads against the async proxy. (Here
    // every thread stores what it read before arriving, which happens to complete the loads;
    // chapter 14's consumers do not, and there the refill overwrote a slot that was still
    // being read: see its README.)
    I::fence_proxy_async_shared();
    __syncwarp();                           // the whole warp has read slot s ...
    if (t % 32 == 0) I::arrive(&empty[s]);  // ... so its lane 0 releases it (release order)
    if (t == 0 && j + STAGES < my_tiles && !produce(j + STAGES)) return;
  }
  // No copy is in flight here: every issued tile was waited for by its consumers.
}

template <Bug BUG>
__global__ void __launch_bounds__(THREADS)
    stream_v1_bulk_ptx_kernel(const int4* __restrict__ d_in, int4* __restrict__ d_out,
                              std::size_t n_vecs, unsigned* d_error) {
  extern __shared__ __align__(128) unsigned char smem_raw[];  // [4][1024] x 16 B = 64 KiB
  __shared__ __align__(8) std::uint64_t full[TMA_STAGES], empty[TMA_STAGES];
  bulk_ring<RawPtx, BUG, TMA_STAGES, TMA_TILE_VECS>(reinterpret_cast<int4*>(smem_raw), full, empty,
                                                    d_in, d_out, n_vecs, d_error);
}

// ---------------------------------------------------------------------------------------------
// v5-v7: the v1 ring in other shapes - bytes in flight vs slot size, for one issuing thread
// ---------------------------------------------------------------------------------------------
// At one block per SM, the bytes a single SM has requested and not yet received are bounded
// by the ring: at most STAGES x TILE bytes (less the slot being consumed). Little's law says
// the bandwidth one SM can sustain is (bytes in flight) / (latency), so 4 x 16 KiB = 64 KiB
// may be too little to cover DRAM latency under load at 132 SMs. But the slot size matters
// too: a consumer starts only when ALL bytes of its slot have landed (the slowest of 128
// 128-byte lines for 16 KiB), and a slot is refilled only after all 8 warps have read it.
// The three variants separate the two effects (v1 = 4 x 16 KiB is the reference point):
//   v5: 8 x 16 KiB  - twice v1's bytes in flight, the same slot size;
//   v6: 4 x 32 KiB  - the same 128 KiB as v5 in half the issues and barrier operations, but
//                     coarser slots: each is released later, so the bytes really in flight
//                     dip lower between refills;
//   v7: 16 x 4 KiB  - v1's 64 KiB in 4 KiB slots (v0's granularity): refills 4x finer, but
//                     thread 0 issues 4x as many copies (wait empty, expect_tx, UBLKCP each).
// All three use more than 48 KiB of dynamic shared memory (tut::persistent_grid opts
// them in); they run at --blocks-per-sm (default 1), clamped to what fits.
template <int STAGES, int TILE_VECS>
__global__ void __launch_bounds__(THREADS)
    stream_v5_bulk_deep_kernel(const int4* __restrict__ d_in, int4* __restrict__ d_out,
                               std::size_t n_vecs, unsigned* d_error) {
  extern __shared__ __align__(128) unsigned char smem_raw[];  // [STAGES][TILE_VECS] x 16 B
  __shared__ __align__(8) std::uint64_t full[STAGES], empty[STAGES];
  bulk_ring<RawPtx, Bug::kNone, STAGES, TILE_VECS>(reinterpret_cast<int4*>(smem_raw), full, empty,
                                                   d_in, d_out, n_vecs, d_error);
}

// ---------------------------------------------------------------------------------------------
// v2: the same ring through CCCL's cuda::ptx (one function per PTX instruction)
// ---------------------------------------------------------------------------------------------
// CcclPtx is RawPtx's six instructions spelled with cuda::ptx (CCCL 3.0.1); bulk_ring is
// unchanged. Each member names the PTX it emits.
struct CcclPtx {
  // mbarrier.init
  static __device__ void mbarrier_init(std::uint64_t* bar, std::uint32_t count) {
    cuda::ptx::mbarrier_init(bar, count);
  }
  // fence.proxy.async.shared::cta
  static __device__ void fence_proxy_async_shared() {
    cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
  }
  // mbarrier.arrive.expect_tx.release.cta.shared::cta
  static __device__ void arrive_expect_tx(std::uint64_t* bar, std::uint32_t bytes) {
    (void)cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cta,
                                               cuda::ptx::space_shared, bar, bytes);
  }
  // mbarrier.arrive
  static __device__ void arrive(std::uint64_t* bar) { (void)cuda::ptx::mbarrier_arrive(bar); }
  // cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes
  static __device__ void bulk_load(void* dst, const void* src, std::uint32_t bytes,
                                   std::uint64_t* bar) {
    cuda::ptx::cp_async_bulk(cuda::ptx::space_shared, cuda::ptx::space_global, dst, src, bytes,
                             bar);
  }
  // mbarrier.try_wait.parity
  static __device__ bool try_wait_parity(std::uint64_t* bar, std::uint32_t parity) {
    return cuda::ptx::mbarrier_try_wait_parity(bar, parity);
  }
};

__global__ void __launch_bounds__(THREADS)
    stream_v2_bulk_cccl_kernel(const int4* __restrict__ d_in, int4* __restrict__ d_out,
                               std::size_t n_vecs, unsigned* d_error) {
  extern __shared__ __align__(128) unsigned char smem_raw[];  // [4][1024] x 16 B = 64 KiB
  __shared__ __align__(8) std::uint64_t full[TMA_STAGES], empty[TMA_STAGES];
  bulk_ring<CcclPtx, Bug::kNone, TMA_STAGES, TMA_TILE_VECS>(reinterpret_cast<int4*>(smem_raw), full,
                                                            empty, d_in, d_out, n_vecs, d_error);
}

// ---------------------------------------------------------------------------------------------
// v3: bulk load AND bulk store - the data never passes through a register on its way out
// ---------------------------------------------------------------------------------------------
// The threads reverse slot s into one of two output staging buffers with ordinary stores
// (STS), then thread 0 hands that buffer to the TMA unit: cp.async.bulk.global.shared::cta
// (bulk_group completion). Two rules:
//   1. fence.proxy.async: the STS writes belong to the generic proxy, the bulk store reads
//      through the async proxy. Each writing thread fences before the barrier that precedes
//      the store; without it the TMA unit may read stale shared memory.
//   2. A staging buffer may be rewritten only once the store that reads it has finished
//      READING it: cp.async.bulk.wait_group.read N waits until at most N bulk groups still
//      read shared memory (their global writes may still be in flight, which is fine).
// Here two staging buffers alternate, so before writing buffer j & 1 we allow 1 pending group
// (the store of tile j-1, from the other buffer).
__global__ void __launch_bounds__(THREADS)
    stream_v3_bulk_store_kernel(const int4* __restrict__ d_in, int4* __restrict__ d_out,
                                std::size_t n_vecs, unsigned* d_error) {
  namespace ptx = cuda::ptx;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  int4* s_ring = reinterpret_cast<int4*>(smem_raw);    // [STAGES][TMA_TILE_VECS] x 16 B
  int4* s_out = s_ring + TMA_STAGES * TMA_TILE_VECS;   // [2][TMA_TILE_VECS] x 16 B
  __shared__ __align__(8) std::uint64_t full[TMA_STAGES];
  const int t = threadIdx.x;
  const std::size_t num_tiles = (n_vecs + TMA_TILE_VECS - 1) / TMA_TILE_VECS;
  const std::size_t my_tiles = tiles_of_this_block(num_tiles);
  init_full_barriers<TMA_STAGES>(full);  // count 1 each, fenced for the TMA unit (as in v1)

  // Here every slot is released by a __syncthreads (the loop has two anyway), so the producer
  // needs no empty barriers: it refills slot s right after the barrier that ends tile j.
  auto produce = [&](std::size_t j) {
    const int s = static_cast<int>(j % TMA_STAGES);
    const std::size_t base = block_tile(j) * TMA_TILE_VECS;
    const std::uint32_t bytes = 16u * tile_count(n_vecs, base, TMA_TILE_VECS);
    (void)ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared,
                                         &full[s], bytes);
    ptx::cp_async_bulk(ptx::space_shared, ptx::space_global, s_ring + s * TMA_TILE_VECS,
                       d_in + base, bytes, &full[s]);
  };
  if (t == 0)  // prologue
    for (std::size_t j = 0; j < my_tiles && j < TMA_STAGES; ++j) produce(j);

  for (std::size_t j = 0; j < my_tiles; ++j) {  // steady state
    const int s = static_cast<int>(j % TMA_STAGES);
    const bool landed = wait_parity_bounded(&full[s], ring_parity<TMA_STAGES>(j));
    int4* s_dst = s_out + (j & 1) * TMA_TILE_VECS;
    if (t == 0) ptx::cp_async_bulk_wait_group_read(ptx::n32_t<1>{});  // s_dst no longer read
    // Barrier A: s_dst is free for everyone; and a block-uniform decision on a timeout, so no
    // thread is left waiting at a later __syncthreads.
    if (__syncthreads_or(!landed)) {
      if (t == 0) {
        atomicOr(d_error, kErrFullTimeout);
        ptx::cp_async_bulk_wait_group(ptx::n32_t<0>{});
      }
      return;
    }
    const std::size_t base = block_tile(j) * TMA_TILE_VECS;
    const int count = tile_count(n_vecs, base, TMA_TILE_VECS);
    copy_tile_reversed<VECS_PER_THREAD>(s_dst, s_ring + s * TMA_TILE_VECS, count);  // -> STS
    ptx::fence_proxy_async(ptx::space_shared);  // rule 1: my STS -> visible to the async proxy
    __syncthreads();  // Barrier B: s_dst complete; slot s fully read
    if (t == 0) {
      ptx::cp_async_bulk(ptx::space_global, ptx::space_shared, d_out + base, s_dst,
                         16u * count);
      ptx::cp_async_bulk_commit_group();  // one bulk group per tile
      if (j + TMA_STAGES < my_tiles) produce(j + TMA_STAGES);  // slot s was released by B
    }
  }
  // epilogue: the stores must have finished reading shared memory before the block exits
  // (and we wait for full completion, so the kernel's end really means "written").
  if (t == 0) ptx::cp_async_bulk_wait_group(ptx::n32_t<0>{});
}

// ---------------------------------------------------------------------------------------------
// v4: cuda::memcpy_async + cuda::barrier - the portable spelling of the same bulk copy
// ---------------------------------------------------------------------------------------------
// With a cuda::barrier<thread_scope_block> in shared memory, 16-byte aligned pointers and a
// cuda::aligned_size_t<16> size, CCCL lowers memcpy_async on sm_90 to cp.async.bulk plus
// mbarrier.expect_tx (asm_expect.txt asserts it). On sm_80 the same call becomes cp.async.
// The barrier counts THREADS arrivals per phase; the issuing thread adds the bytes.
// The waits are unbounded (cuda::barrier has no timed wait): this variant has no bug to catch.
using block_barrier = cuda::barrier<cuda::thread_scope_block>;

__global__ void __launch_bounds__(THREADS)
    stream_v4_memcpy_async_kernel(const int4* __restrict__ d_in, int4* __restrict__ d_out,
                                  std::size_t n_vecs) {
  extern __shared__ __align__(128) unsigned char smem_raw[];
  int4* s_ring = reinterpret_cast<int4*>(smem_raw);  // [STAGES][TMA_TILE_VECS] x 16 B
  // Raw storage, initialised with init() below: a `__shared__ cuda::barrier` would run a
  // dynamic initialiser (warning 20054).
  __shared__ __align__(8) unsigned char bar_storage[TMA_STAGES * sizeof(block_barrier)];
  block_barrier* bar = reinterpret_cast<block_barrier*>(bar_storage);
  const int t = threadIdx.x;
  const std::size_t num_tiles = (n_vecs + TMA_TILE_VECS - 1) / TMA_TILE_VECS;
  const std::size_t my_tiles = tiles_of_this_block(num_tiles);
  if (t == 0) {
    for (int s = 0; s < TMA_STAGES; ++s) init(&bar[s], THREADS);
    // As in v1: the TMA unit will complete_tx on these barriers (the CUDA programming guide's
    // TMA example does the same after init()).
    cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
  }
  __syncthreads();

  auto produce = [&](std::size_t j) {
    const int s = static_cast<int>(j % TMA_STAGES);
    const std::size_t base = block_tile(j) * TMA_TILE_VECS;
    const std::size_t bytes = 16u * tile_count(n_vecs, base, TMA_TILE_VECS);
    cuda::memcpy_async(s_ring + s * TMA_TILE_VECS, d_in + base,
                       cuda::aligned_size_t<16>(bytes), bar[s]);
  };
  if (t == 0)  // prologue
    for (std::size_t j = 0; j < my_tiles && j < TMA_STAGES; ++j) produce(j);
  for (std::size_t j = 0; j < my_tiles; ++j) {  // steady state
    const int s = static_cast<int>(j % TMA_STAGES);
    // Phase completes when all THREADS arrived and the copy's bytes landed: slot s = tile j.
    bar[s].arrive_and_wait();
    const std::size_t base = block_tile(j) * TMA_TILE_VECS;
    copy_tile_reversed<VECS_PER_THREAD>(d_out + base, s_ring + s * TMA_TILE_VECS,
                                        tile_count(n_vecs, base, TMA_TILE_VECS));
    __syncthreads();  // slot s consumed; the refill's bytes go to bar[s]'s next phase
    if (t == 0 && j + TMA_STAGES < my_tiles) produce(j + TMA_STAGES);
  }
}

// ---------------------------------------------------------------------------------------------
// Launchers. blocks_per_sm = 0 means full occupancy. The grid is persistent (blocks_per_sm x
// SMs blocks loop over the tiles), so occupancy is exactly what is asked for.
// ---------------------------------------------------------------------------------------------
constexpr std::size_t RING_SMEM_BYTES = std::size_t{TMA_STAGES} * TMA_TILE_BYTES;  // 64 KiB
constexpr std::size_t STORE_SMEM_BYTES = RING_SMEM_BYTES + 2 * TMA_TILE_BYTES;     // 96 KiB

inline void launch_stream_v0(const void* d_in, void* d_out, std::size_t bytes, int sm_count,
                             int blocks_per_sm, cudaStream_t s) {
  const unsigned grid =
      tut::persistent_grid(stream_v0_cpasync_kernel, THREADS, sm_count, blocks_per_sm);
  stream_v0_cpasync_kernel<<<grid, THREADS, 0, s>>>(static_cast<const int4*>(d_in),
                                                    static_cast<int4*>(d_out), bytes / 16);
}

template <Bug BUG = Bug::kNone>
void launch_stream_v1(const void* d_in, void* d_out, std::size_t bytes, unsigned* d_error,
                      int sm_count, int blocks_per_sm, cudaStream_t s) {
  require_bulk_copy_rules(d_out, d_in, bytes);
  auto kernel = stream_v1_bulk_ptx_kernel<BUG>;
  const unsigned grid =
      tut::persistent_grid(kernel, THREADS, sm_count, blocks_per_sm, RING_SMEM_BYTES);
  kernel<<<grid, THREADS, RING_SMEM_BYTES, s>>>(static_cast<const int4*>(d_in),
                                                static_cast<int4*>(d_out), bytes / 16, d_error);
}

// v5-v7: the v1 ring as STAGES slots of TILE_VECS x 16 B (dynamic shared memory).
template <int STAGES, int TILE_VECS>
void launch_stream_v5_deep(const void* d_in, void* d_out, std::size_t bytes, unsigned* d_error,
                           int sm_count, int blocks_per_sm, cudaStream_t s) {
  require_bulk_copy_rules(d_out, d_in, bytes);
  constexpr std::size_t smem = std::size_t{STAGES} * TILE_VECS * 16;
  static_assert(smem <= 200 * 1024, "leaves room under the 227 KiB per-block limit");
  auto kernel = stream_v5_bulk_deep_kernel<STAGES, TILE_VECS>;
  const unsigned grid = tut::persistent_grid(kernel, THREADS, sm_count, blocks_per_sm, smem);
  kernel<<<grid, THREADS, smem, s>>>(static_cast<const int4*>(d_in), static_cast<int4*>(d_out),
                                     bytes / 16, d_error);
}

inline void launch_stream_v2(const void* d_in, void* d_out, std::size_t bytes, unsigned* d_error,
                             int sm_count, int blocks_per_sm, cudaStream_t s) {
  require_bulk_copy_rules(d_out, d_in, bytes);
  const unsigned grid = tut::persistent_grid(stream_v2_bulk_cccl_kernel, THREADS, sm_count,
                                             blocks_per_sm, RING_SMEM_BYTES);
  stream_v2_bulk_cccl_kernel<<<grid, THREADS, RING_SMEM_BYTES, s>>>(
      static_cast<const int4*>(d_in), static_cast<int4*>(d_out), bytes / 16, d_error);
}

inline void launch_stream_v3(const void* d_in, void* d_out, std::size_t bytes, unsigned* d_error,
                             int sm_count, int blocks_per_sm, cudaStream_t s) {
  require_bulk_copy_rules(d_out, d_in, bytes);
  const unsigned grid = tut::persistent_grid(stream_v3_bulk_store_kernel, THREADS, sm_count,
                                             blocks_per_sm, STORE_SMEM_BYTES);
  stream_v3_bulk_store_kernel<<<grid, THREADS, STORE_SMEM_BYTES, s>>>(
      static_cast<const int4*>(d_in), static_cast<int4*>(d_out), bytes / 16, d_error);
}

inline void launch_stream_v4(const void* d_in, void* d_out, std::size_t bytes, int sm_count,
                             int blocks_per_sm, cudaStream_t s) {
  require_bulk_copy_rules(d_out, d_in, bytes);
  const unsigned grid = tut::persistent_grid(stream_v4_memcpy_async_kernel, THREADS, sm_count,
                                             blocks_per_sm, RING_SMEM_BYTES);
  stream_v4_memcpy_async_kernel<<<grid, THREADS, RING_SMEM_BYTES, s>>>(
      static_cast<const int4*>(d_in), static_cast<int4*>(d_out), bytes / 16);
}

// ---------------------------------------------------------------------------------------------
// CPU reference: every 4 KiB sub-tile (256 x 16 B) reversed in 16-byte units, the last one
// (possibly partial) within itself. Identical to chapter 01's reference.
// ---------------------------------------------------------------------------------------------
inline std::vector<std::uint32_t> reference_reverse_tiles(const std::vector<std::uint32_t>& in) {
  const std::size_t n_vecs = in.size() / 4;
  std::vector<std::uint32_t> out(in.size());
  for (std::size_t base = 0; base < n_vecs; base += SUB_VECS) {
    const std::size_t count = std::min<std::size_t>(SUB_VECS, n_vecs - base);
    for (std::size_t t = 0; t < count; ++t)
      for (int w = 0; w < 4; ++w) out[(base + t) * 4 + w] = in[(base + count - 1 - t) * 4 + w];
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The problem: one input and one output buffer of `size` bytes, plus a device error word the
// bounded waits report into. Bytes moved = size read + size written.
// ---------------------------------------------------------------------------------------------
// What verify() prints when the error word is not 0.
inline std::string describe_error(unsigned err) {
  return std::string(err & kErrFullTimeout ? "an mbarrier 'full' wait timed out; " : "") +
         (err & kErrEmptyTimeout ? "an mbarrier 'empty' wait timed out; " : "") +
         "(the kernel gave up instead of hanging)";
}

struct Problem {
  explicit Problem(const tut::RunConfig& cfg)
      : cfg(cfg), n_words(cfg.size / 4), d_in(n_words), d_out(n_words) {
    h_in.resize(n_words);
    tut::fill_unique_words(h_in.data(), n_words, cfg.seed);
    d_in.upload(h_in);
  }
  void poison(cudaStream_t s) {
    d_out.poison(s);
    d_error.clear(s);
  }
  tut::VerifyResult verify(cudaStream_t s, int /*reference*/) {
    if (want.empty()) want = reference_reverse_tiles(h_in);
    return compare_words_and_error(s, d_out, want, d_error, describe_error);
  }
  double work() const { return 2.0 * static_cast<double>(cfg.size); }
  std::string describe() const { return tut::format_bytes(double(cfg.size)) + " per buffer"; }

  int sms() const { return cfg.device.sm_count; }
  int low() const { return static_cast<int>(cfg.extra("blocks-per-sm")); }

  tut::RunConfig cfg;
  std::size_t n_words;
  tut::DeviceBuffer<std::uint32_t> d_in, d_out;
  ErrorWord d_error;  // the bounded waits' kErr* bits
  std::vector<std::uint32_t> h_in, want;
};

// ---------------------------------------------------------------------------------------------
// The variant registry
// ---------------------------------------------------------------------------------------------
inline std::vector<tut::Variant<Problem>> variants() {
  VariantList<Problem> add;
  add("v0_cpasync_full", "v0 cp.async 8-stage, full occ",
      "chapter 06's ring: 16 B LDGSTS per thread, 4 KiB tiles, as many blocks per SM as fit",
      [](Problem& p, cudaStream_t s) {
        launch_stream_v0(p.d_in.data(), p.d_out.data(), p.cfg.size, p.sms(), 0, s);
      });
  add("v0_cpasync_low", "v0 cp.async 8-stage, low occ",
      "the same at --blocks-per-sm blocks per SM (default 1)",
      [](Problem& p, cudaStream_t s) {
        launch_stream_v0(p.d_in.data(), p.d_out.data(), p.cfg.size, p.sms(), p.low(), s);
      });
  add("v1_bulk_ptx_full", "v1 bulk PTX 4x16K, full occ",
      "raw PTX cp.async.bulk, one issuing thread, full/empty mbarrier ring; full occupancy",
      [](Problem& p, cudaStream_t s) {
        launch_stream_v1(p.d_in.data(), p.d_out.data(), p.cfg.size, p.d_error.data(), p.sms(),
                         0, s);
      });
  add("v1_bulk_ptx_low", "v1 bulk PTX 4x16K, low occ",
      "the same at --blocks-per-sm blocks per SM",
      [](Problem& p, cudaStream_t s) {
        launch_stream_v1(p.d_in.data(), p.d_out.data(), p.cfg.size, p.d_error.data(), p.sms(),
                         p.low(), s);
      });
  add("v2_bulk_cccl_low", "v2 bulk cuda::ptx, low occ",
      "v1 written with cuda::ptx wrappers, at --blocks-per-sm blocks per SM",
      [](Problem& p, cudaStream_t s) {
        launch_stream_v2(p.d_in.data(), p.d_out.data(), p.cfg.size, p.d_error.data(), p.sms(),
                         p.low(), s);
      });
  add("v3_bulk_store_low", "v3 bulk load+store, low occ",
      "reverse into shared, fence.proxy.async, bulk store + wait_group.read; low occupancy",
      [](Problem& p, cudaStream_t s) {
        launch_stream_v3(p.d_in.data(), p.d_out.data(), p.cfg.size, p.d_error.data(), p.sms(),
                         p.low(), s);
      });
  add("v4_memcpy_async_low", "v4 memcpy_async+barrier, low",
      "cuda::memcpy_async(aligned_size_t<16>) on a cuda::barrier -> cp.async.bulk on sm_90",
      [](Problem& p, cudaStream_t s) {
        launch_stream_v4(p.d_in.data(), p.d_out.data(), p.cfg.size, p.sms(), p.low(), s);
      });
  // v5-v7: other ring shapes for the one issuing thread (> 48 KiB dynamic smem each)
  add("v5_bulk_8x16K_low", "v5 bulk PTX 8x16K, low occ",
      "v1's ring with 8 slots of 16 KiB: 128 KiB in flight per block, at --blocks-per-sm",
      [](Problem& p, cudaStream_t s) {
        launch_stream_v5_deep<8, 1024>(p.d_in.data(), p.d_out.data(), p.cfg.size,
                                       p.d_error.data(), p.sms(), p.low(), s);
      });
  add("v6_bulk_4x32K_low", "v6 bulk PTX 4x32K, low occ",
      "v1's ring with 4 slots of 32 KiB: 128 KiB, half the issues of v5, at --blocks-per-sm",
      [](Problem& p, cudaStream_t s) {
        launch_stream_v5_deep<4, 2048>(p.d_in.data(), p.d_out.data(), p.cfg.size,
                                       p.d_error.data(), p.sms(), p.low(), s);
      });
  add("v7_bulk_16x4K_low", "v7 bulk PTX 16x4K, low occ",
      "v1's ring with 16 slots of 4 KiB: v1's 64 KiB, 4x finer refills, 4x the issues",
      [](Problem& p, cudaStream_t s) {
        launch_stream_v5_deep<16, 256>(p.d_in.data(), p.d_out.data(), p.cfg.size,
                                       p.d_error.data(), p.sms(), p.low(), s);
      });
  add("v8_wrong_tx", "v8 BROKEN: expect_tx +16 B",
      "negative: announces 16 bytes too many; the phase never completes; bounded wait gives up",
      [](Problem& p, cudaStream_t s) {
        launch_stream_v1<Bug::kWrongTxCount>(p.d_in.data(), p.d_out.data(), p.cfg.size,
                                             p.d_error.data(), p.sms(), 0, s);
      },
      true);
  add("v9_wrong_parity", "v9 BROKEN: producer parity",
      "negative: producer waits on empty[] parity n&1 instead of (n&1)^1; gives up, fails",
      [](Problem& p, cudaStream_t s) {
        launch_stream_v1<Bug::kWrongParity>(p.d_in.data(), p.d_out.data(), p.cfg.size,
                                            p.d_error.data(), p.sms(), 0, s);
      },
      true);
  return std::move(add.list);
}

}  // namespace ch11
