/// @file kernels.cuh
/// @brief Chapter 15: capstone - single-precision GEMM, C = A x B, built up one step at a time.
//
// How the copy techniques of the earlier chapters pay off in a compute kernel. Each step is a
// variant, measured in the same run against cuBLAS SGEMM (fp32 FFMA, TF32 off):
//   v1 naive           one thread per C element, operands straight from global memory (the
//                      baseline of the "vs v1" column)
//   v2 smem tiles      32x32 tiles staged in shared memory with synchronous loads
//   v3 register tiles  128x128 block tile, each thread an 8x8 sub-tile in registers,
//                      synchronous LDG -> STS loads (block_tile.cuh holds the shared core)
//   v4 cp.async        v3 with a STAGES-deep ring of cp.async.cg 16-byte copies (zero-fill
//                      at the matrix edges through the src-size operand)
//   v5 TMA (sm_90)     v3 fed by 2D TMA boxes through an mbarrier ring; one thread issues
//   v6 empty ring      v5 with an empty mbarrier per slot instead of the block barrier
//   v7 32-deep k-tiles v5's kernel instantiated with KDEPTH = 32: half the k-tiles per FLOP
//   v9 (negative)      v2 with B's tile loaded at A's block offset (broken.cuh)
// The host side (Problem, CPU reference, cuBLAS, tensor maps, registry) is in main.cu.
// Layout: row-major, every row padded to a 16-byte pitch (lda = K rounded up to 4 floats):
// the precondition for 16-byte cp.async and for TMA global strides. The padding holds NaN, so
// a kernel that reads past an edge poisons its own result and fails the check.
//
// Minimum compute capability: 8.0 (v5 needs 9.0 and is skipped below it); minimum toolkit
// CUDA 12.8 (PTX ISA 8.6: v5's .shared::cta destination of cp.async.bulk.tensor).
#pragma once

#include <cuda.h>  // CUtensorMap (the type only; the host encodes it, see main.cu)
#include <cuda_runtime.h>

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#include <cuda/ptx>
#endif

#include "block_tile.cuh"
#include "common/bounded_wait.cuh"
#include "common/cp_async.cuh"
#include "common/launch.cuh"
#include "common/perturb.cuh"
#include "common/ring.cuh"

namespace ch15 {

constexpr int NAIVE_BX = 32, NAIVE_BY = 8;  // v1: 256 threads, x along the columns of C
constexpr int T2 = 32;                      // v2/v9: 32x32 tiles, 1024 threads per block

// ---------------------------------------------------------------------------------------------
// v1: naive - one thread per element of C
// ---------------------------------------------------------------------------------------------
// Consecutive threads take consecutive columns, so each B load is coalesced and each A load
// is a broadcast. Every operand is fetched from L1/L2 K times per block: arithmetic intensity
// is one FMA per 8 bytes loaded, so this is a memory-system benchmark, not a GEMM.
__global__ void __launch_bounds__(NAIVE_BX* NAIVE_BY) gemm_v1_naive_kernel(GemmArgs g) {
  const int col = blockIdx.x * NAIVE_BX + threadIdx.x;
  const int row = blockIdx.y * NAIVE_BY + threadIdx.y;
  if (row >= g.M || col >= g.N) return;
  float acc = 0.0f;
  for (int k = 0; k < g.K; ++k) acc = fmaf(g.A[row * g.lda + k], g.B[k * g.ldb + col], acc);
  g.C[row * g.ldc + col] = acc;
}

// ---------------------------------------------------------------------------------------------
// v2: shared-memory tiles, synchronous loads
// ---------------------------------------------------------------------------------------------
// Each block computes a 32x32 tile of C. Per step it stages a 32x32 tile of A and of B
// (LDG -> register -> STS), waits at BAR.SYNC, and every element staged is reused 32 times.
// Elements outside the matrices are staged as zero, so the inner loop needs no bounds test.
__global__ void __launch_bounds__(T2* T2) gemm_v2_smem_kernel(GemmArgs g) {
  __shared__ float s_a[T2][T2];  // [rows of this C tile][k]
  __shared__ float s_b[T2][T2];  // [k][columns of this C tile]
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * T2 + ty, col = blockIdx.x * T2 + tx;
  float acc = 0.0f;
  for (int k0 = 0; k0 < g.K; k0 += T2) {
    s_a[ty][tx] = row < g.M && k0 + tx < g.K ? g.A[row * g.lda + k0 + tx] : 0.0f;
    s_b[ty][tx] = k0 + ty < g.K && col < g.N ? g.B[(k0 + ty) * g.ldb + col] : 0.0f;
    __syncthreads();  // both tiles complete before anyone reads them
#pragma unroll
    for (int k = 0; k < T2; ++k) acc = fmaf(s_a[ty][k], s_b[k][tx], acc);  // broadcast x row
    __syncthreads();  // everyone done reading before the next step overwrites the tiles
  }
  if (row < g.M && col < g.N) g.C[row * g.ldc + col] = acc;
}

// ---------------------------------------------------------------------------------------------
// v3: register-blocked, synchronous loads
// ---------------------------------------------------------------------------------------------
// Each block now does 128x128x16 FMAs per 16 KiB staged: 16 FMA per byte moved into shared
// memory, 4x v2's 4. So it is hungry: with two blocks per SM the LDG latency of a stage is
// exposed unless the other block has work, because nothing else is in flight while it waits.
__global__ void __launch_bounds__(THREADS, 2) gemm_v3_register_kernel(GemmArgs g) {
  __shared__ __align__(16) float s_a[BM * BK];  // [128 x 16] floats
  __shared__ __align__(16) float s_b[BK * BN];  // [16 x 128] floats
  const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const TileLoader ld(g, tid, m0, n0);
  float acc[TM][TN] = {};
  for (int k0 = 0; k0 < g.K; k0 += BK) {
    float4 ra[2], rb[2];  // all four loads are issued before the first store
#pragma unroll
    for (int p = 0; p < 2; ++p) {
      ra[p] = load_chunk(g.A + ld.a_offset(g, p, k0), ld.a_valid(g, p, k0));
      rb[p] = load_chunk(g.B + ld.b_offset(g, p, k0), ld.b_valid(g, p, k0));
    }
#pragma unroll
    for (int p = 0; p < 2; ++p) {
      *reinterpret_cast<float4*>(s_a + 4 * tid + p * 1024) = ra[p];
      *reinterpret_cast<float4*>(s_b + 4 * tid + p * 1024) = rb[p];
    }
    __syncthreads();  // the stage is complete
    mma_block_tile<BK>(s_a, s_b, acc, ty, tx);
    __syncthreads();  // everyone has read the stage before it is overwritten
  }
  store_block_tile(g, acc, m0, n0, ty, tx);
}

// ---------------------------------------------------------------------------------------------
// v4: register-blocked, STAGES-deep cp.async ring
// ---------------------------------------------------------------------------------------------
// cp.async.cg [dst], [src], 16, src_size (tut::cp_async_cg16): the LSU copies 16 bytes global
// -> shared through L2, without a register round trip, and writes zeros for bytes
// src_size..15. A chunk that straddles the right/bottom edge reads only its valid floats and
// a chunk wholly outside reads nothing (src_size = 0; the address, the matrix base, is then
// never dereferenced). SASS: LDGSTS.E.BYPASS.128.
__device__ __forceinline__ void issue_stage_cp_async(const GemmArgs& g, const TileLoader& ld,
                                                     float* s_stage, int tid, int k0) {
  float* s_a = s_stage;            // [128 x 16]
  float* s_b = s_stage + BM * BK;  // [16 x 128]
#pragma unroll
  for (int p = 0; p < 2; ++p) {  // this thread's two 16-byte chunks of A and of B
    const int va = ld.a_valid(g, p, k0), vb = ld.b_valid(g, p, k0);
    tut::cp_async_cg16(s_a + 4 * tid + p * 1024, va ? g.A + ld.a_offset(g, p, k0) : g.A, 4 * va);
    tut::cp_async_cg16(s_b + 4 * tid + p * 1024, vb ? g.B + ld.b_offset(g, p, k0) : g.B, 4 * vb);
  }
}

template <int STAGES>
__global__ void __launch_bounds__(THREADS, 2) gemm_v4_cp_async_kernel(GemmArgs g) {
  extern __shared__ __align__(128) float s_ring[];  // STAGES x [A 128x16 | B 16x128]
  const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const int num_k_tiles = (g.K + BK - 1) / BK;
  const TileLoader ld(g, tid, m0, n0);
  float acc[TM][TN] = {};

  // Prologue: fill STAGES-1 slots. Commit even when there is no tile, so that group number
  // always equals k-tile number (the wait below counts groups, not tiles).
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < num_k_tiles) issue_stage_cp_async(g, ld, s_ring + s * STAGE_FLOATS, tid, s * BK);
    tut::cp_async_commit_group();
  }
  for (int kt = 0; kt < num_k_tiles; ++kt) {
    // kt + STAGES - 1 groups are committed; allowing STAGES-2 pending means groups 0..kt
    // are complete: this thread's copies of tile kt have landed in slot kt % STAGES.
    tut::cp_async_wait_group<STAGES - 2>();
    // Two jobs: (1) everyone's copies of tile kt are visible to everyone; (2) everyone has
    // finished computing on tile kt-1, so its slot, (kt-1) % STAGES, may be refilled.
    __syncthreads();
    // EXERCISE-BEGIN: the slot that tile kt-1 occupied is free now: start the copy of the tile that will use it next, if the matrix has one
    const int next = kt + STAGES - 1;  // lands in slot next % STAGES == (kt-1) % STAGES
    if (next < num_k_tiles)
      issue_stage_cp_async(g, ld, s_ring + (next % STAGES) * STAGE_FLOATS, tid, next * BK);
    // EXERCISE-END
    tut::cp_async_commit_group();
    const float* s_stage = s_ring + (kt % STAGES) * STAGE_FLOATS;
    mma_block_tile<BK>(s_stage, s_stage + BM * BK, acc, ty, tx);  // overlaps the copies in flight
  }
  // Nothing left to drain: the trailing groups are empty.
  store_block_tile(g, acc, m0, n0, ty, tx);
}

// ---------------------------------------------------------------------------------------------
// v5: register-blocked, tiles fed by TMA through an mbarrier ring (sm_90)
// ---------------------------------------------------------------------------------------------
// Per stage, thread 0 issues one mbarrier.arrive.expect_tx of stage_bytes(KDEPTH) on full[slot]
// and two cp.async.bulk.tensor.2d boxes - A [128 rows x KDEPTH k] and B [KDEPTH k x 128 cols]
// (v5: KDEPTH = BK = 16; v7 is this kernel with KDEPTH = 32, see its launcher). The TMA unit
// walks the boxes, writes them dense into shared memory (the layout v4 builds with 512
// LDGSTS), zero-fills what lies outside the tensor (the ragged edges: no bounds code), and
// completes the transaction bytes on full[slot]: always the full box, zeros included.
// Phase invariant: full[slot] completes phase kt / STAGES when tile kt has landed
// (tut::RingPosition's phase is its parity). A slot is refilled only after the block barrier
// that follows everyone's reads of it, so the barrier never runs two phases ahead.
template <int STAGES, int KDEPTH>
__global__ void __launch_bounds__(THREADS, 2) gemm_v5_tma_kernel(const __grid_constant__ CUtensorMap tmap_a,
                                                                const __grid_constant__ CUtensorMap tmap_b,
                                                                GemmArgs g) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  namespace ptx = cuda::ptx;
  extern __shared__ unsigned char s_raw[];
  __shared__ uint64_t full[STAGES];
  // TMA destinations must be 128-byte aligned; the launcher allocates 128 spare bytes. The
  // offset is added to s_raw itself, so the compiler still knows the ring is shared (LDS).
  const unsigned misalign = static_cast<unsigned>(__cvta_generic_to_shared(s_raw)) & 127u;
  float* s_ring = reinterpret_cast<float*>(s_raw + ((128u - misalign) & 127u));
  const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const int num_k_tiles = (g.K + KDEPTH - 1) / KDEPTH;
  float acc[TM][TN] = {};

  if (tid == 0) {
    for (int s = 0; s < STAGES; ++s) ptx::mbarrier_init(&full[s], 1);  // one arrive: thread 0
    // The barriers are used only inside this block (no cluster): the async-proxy fence makes
    // the initialised barriers visible to the TMA, which completes transactions on full[s].
    ptx::fence_proxy_async(ptx::space_shared);  // init -> TMA
  }
  __syncthreads();

  auto issue = [&](int kt, int slot) {  // thread 0 only
    float* s_a = s_ring + slot * stage_floats(KDEPTH);
    float* s_b = s_a + BM * KDEPTH;
    ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared,
                                   &full[slot], static_cast<uint32_t>(stage_bytes(KDEPTH)));
    const int32_t coords_a[2] = {kt * KDEPTH, m0};  // innermost first: (k, row)
    const int32_t coords_b[2] = {n0, kt * KDEPTH};  // (col, k)
    ptx::cp_async_bulk_tensor(ptx::space_shared, ptx::space_global, s_a, &tmap_a, coords_a,
                              &full[slot]);
    ptx::cp_async_bulk_tensor(ptx::space_shared, ptx::space_global, s_b, &tmap_b, coords_b,
                              &full[slot]);
  };
  if (tid == 0)  // prologue: every slot gets a tile
    for (int s = 0; s < STAGES && s < num_k_tiles; ++s) issue(s, s);
  tut::RingPosition<STAGES> pos;
  // The k loop has ONE exit, its condition: a `return` from inside the loop (where the block
  // learns that a wait gave up) gives it a second exit edge, and ptxas then copies the 64
  // accumulators and the loaded operands between registers at every back edge, about 33 MOV
  // per k-tile on top of 1024 FFMA, paid on every iteration and not only on a timeout (the
  // notes compare the SASS).
  bool gave_up = false;  // some wait of this block gave up (it named itself in g.error)
  for (int kt = 0; kt < num_k_tiles && !gave_up; ++kt, pos.advance()) {
    // try_wait acquires the phase: the TMA's writes of tile kt are visible after it.
    const auto site = tut::WaitSite::warp(threadIdx.x / 32)
                          .on(tut::Barrier::kFull, pos.slot)
                          .at_k_tile(kt)
                          .expecting(stage_bytes(KDEPTH));
    const bool landed = tut::wait_or_report(&full[pos.slot], pos.phase, g.error, site);
    const float* s_stage = s_ring + pos.slot * stage_floats(KDEPTH);
    mma_block_tile<KDEPTH>(s_stage, s_stage + BM * KDEPTH, acc, ty, tx);
    // EXERCISE-BEGIN: this thread is done reading the slot, and the slot's next write will come from the TMA (the async proxy)
    // The refill is an async-proxy write into this slot, and this thread's reads of it were
    // generic-proxy loads: the fence orders them before the barrier for the async proxy too.
    ptx::fence_proxy_async(ptx::space_shared);  // my slot reads, before the refill
    // EXERCISE-END
    // Everyone has finished reading the slot: only now may the TMA overwrite it. The same
    // barrier tells every thread whether some wait gave up, so the block leaves together.
    tut::perturb(tut::Perturb::kBeforeRelease, kt);
    gave_up = __syncthreads_or(!landed);  // the same in every thread: the block stops together
    // EXERCISE-BEGIN: refill the slot everyone has just released with the tile STAGES ahead, if the matrix has one and no wait gave up (one thread issues)
    if (tid == 0 && kt + STAGES < num_k_tiles && !gave_up) issue(kt + STAGES, pos.slot);
    // EXERCISE-END
  }
  if (gave_up) return;  // C stays unwritten (poisoned); the error word says which wait gave up
  store_block_tile(g, acc, m0, n0, ty, tx);
#else
  (void)tmap_a;
  (void)tmap_b;
  (void)g;
#endif
}

// ---------------------------------------------------------------------------------------------
// v6: v5 without the block barrier per k-tile - an `empty` barrier per slot releases it
// ---------------------------------------------------------------------------------------------
// In v5 every k-tile ends in __syncthreads_or: the block's 8 warps meet 256 times at K = 4096,
// and a warp that finishes its 1024 FFMA early idles until the slowest one arrives. v6 keeps
// v5's ring, boxes, fence and inner product, and replaces the meeting with one mbarrier per
// slot, `empty[slot]`, that counts one arrival per warp: after its last read of the slot,
// every thread fences its reads against the async proxy, __syncwarp hands the warp's reads to
// lane 0, and lane 0 arrives. Thread 0 (the producer, in warp 0) refills a slot only after its
// empty phase completed: at k-tile kt it refills the slot of k-tile kt - 1 with k-tile
// kt - 1 + STAGES, one k-tile late, so that warp 0 waits only for warps that are more than a
// k-tile behind it. The other warps wait only for data: they may run up to STAGES - 1 k-tiles
// ahead of warp 0.
// Phase invariants: full[slot] completes phase j when k-tile j * STAGES + slot has landed;
// empty[slot] completes phase j when all 8 warps have read k-tile j * STAGES + slot. Neither
// can run two phases ahead of its waiter: the refill of phase j + 1 waits for empty phase j,
// which needs every warp's wait on full phase j; empty phase j + 1 needs that refill.
// A timeout: the warp of the thread that gave up stops at the loop condition and does not
// store; the others either finish (their C elements are right) or time out themselves, on full (no
// refill came) or on empty (thread 0), and say so. No block barrier is left to deadlock on.
template <int STAGES>
__global__ void __launch_bounds__(THREADS, 2)  // v6: two blocks per SM, as v5
    gemm_v6_empty_ring_kernel(const __grid_constant__ CUtensorMap tmap_a,
                              const __grid_constant__ CUtensorMap tmap_b, GemmArgs g) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  namespace ptx = cuda::ptx;
  extern __shared__ unsigned char s_raw[];
  __shared__ uint64_t full[STAGES], empty[STAGES];
  const unsigned misalign = static_cast<unsigned>(__cvta_generic_to_shared(s_raw)) & 127u;
  float* s_ring = reinterpret_cast<float*>(s_raw + ((128u - misalign) & 127u));
  const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16, lane = tid % 32;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const int num_k_tiles = (g.K + BK - 1) / BK;
  float acc[TM][TN] = {};

  if (tid == 0) {
    for (int s = 0; s < STAGES; ++s) {
      ptx::mbarrier_init(&full[s], 1);             // one arrive: thread 0's expect_tx
      ptx::mbarrier_init(&empty[s], THREADS / 32);  // one arrive per warp
    }
    ptx::fence_proxy_async(ptx::space_shared);  // v6's inits, before the TMA (this block only)
  }
  __syncthreads();  // the only block barrier: the barriers are initialised

  auto refill = [&](int kt, int slot) {  // thread 0 only: k-tile kt into slot
    float* s_a = s_ring + slot * STAGE_FLOATS;
    tut::perturb(tut::Perturb::kBeforeTmaIssue, kt);
    ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta,  // v6: the stage's bytes
                                   ptx::space_shared, &full[slot], uint32_t{STAGE_BYTES});
    const int32_t a_at[2] = {kt * BK, m0}, b_at[2] = {n0, kt * BK};  // innermost first
    ptx::cp_async_bulk_tensor(ptx::space_shared, ptx::space_global, s_a, &tmap_a, a_at,
                              &full[slot]);
    ptx::cp_async_bulk_tensor(ptx::space_shared, ptx::space_global, s_a + BM * BK, &tmap_b,
                              b_at, &full[slot]);
  };
  if (tid == 0)  // prologue: every slot gets a k-tile
    for (int s = 0; s < STAGES && s < num_k_tiles; ++s) refill(s, s);
  tut::RingPosition<STAGES> pos;
  bool gave_up = false;  // a wait of this warp gave up (it named itself in g.error)
  for (int kt = 0; kt < num_k_tiles && !gave_up; ++kt, pos.advance()) {
    const bool landed = tut::wait_or_report(
        &full[pos.slot], pos.phase, g.error,
        tut::WaitSite::warp(threadIdx.x / 32).on(tut::Barrier::kFull, pos.slot).at_k_tile(kt)
            .expecting(STAGE_BYTES));
    const float* s_stage = s_ring + pos.slot * STAGE_FLOATS;
    mma_block_tile<BK>(s_stage, s_stage + BM * BK, acc, ty, tx);
    // My reads of the slot, before the TMA (async proxy) may overwrite it: fence, then the
    // warp's hand-off to lane 0, whose arrive releases the whole warp's reads.
    ptx::fence_proxy_async(ptx::space_shared);  // v6: my slot reads, before the empty arrive
    __syncwarp();
    tut::perturb(tut::Perturb::kBeforeArrive, kt);
    if (lane == 0) (void)ptx::mbarrier_arrive(&empty[pos.slot]);  // this warp is done with it
    // Thread 0: the slot of k-tile kt - 1 gets k-tile kt - 1 + STAGES once every warp has
    // read kt - 1 (its phase (kt - 1) / STAGES of empty).
    const int done = kt - 1, done_slot = (kt + STAGES - 1) % STAGES;
    if (tid == 0 && done >= 0 && done + STAGES < num_k_tiles) {
      const bool released = tut::wait_or_report(
          &empty[done_slot], static_cast<uint32_t>((done / STAGES) & 1), g.error,
          tut::WaitSite::producer_warp(0).on(tut::Barrier::kEmpty, done_slot).at_k_tile(done));
      if (released) refill(done + STAGES, done_slot);
      gave_up = !released;
    }
    // The warp decides together (lanes' timers may disagree, and thread 0 alone waits on empty):
    // a lane that left the loop alone would leave its warp's next __syncwarp short of a lane.
    gave_up = __any_sync(0xffffffffu, gave_up || !landed);
  }
  if (!gave_up) store_block_tile(g, acc, m0, n0, ty, tx);  // else this warp's C stays poisoned
#else
  (void)tmap_a, (void)tmap_b, (void)g;
#endif
}

// ---------------------------------------------------------------------------------------------
// v7: v5 with 32-deep k-tiles (gemm_v5_tma_kernel<V7_STAGES, V7_KDEPTH>)
// ---------------------------------------------------------------------------------------------
// Every k-tile of v5 costs the block the same fixed work besides its FFMA: the bounded wait on
// full[slot] (a timer read, then try_wait), the release fence, the block barrier, where all 8
// warps idle until the slowest arrives, and thread 0's refill. At KDEPTH = 16 that is paid once
// per 1024 FFMA per thread; at 32, once per 2048. Nothing else changes: the same protocol,
// boxes twice as deep (A [128 x 32], B [32 x 128]: 32 KiB per stage), the same inner product
// over twice as many k. A hypothesis until the GPU measures it: that fixed cost is a visible
// share of v5's k-tile. Shared memory sets the ring: two blocks per SM fit 3 stages of 32 KiB
// (96 KiB each), not 4; the control row v7_tma_bk32_s2 keeps v5's 64 KiB per block (2 stages
// of 32 KiB): against v7 it shows what the third stage buys, against v5 what the deeper
// k-tile buys at the same bytes of ring.
constexpr int V7_KDEPTH = 32;  // the k-depth of one v7 stage
constexpr int V7_STAGES = 3;   // 3 x 32 KiB: the deepest v7 ring with two blocks per SM

// ---------------------------------------------------------------------------------------------
// Launchers. One block per tile of C, not a persistent grid: the rings of v4..v7 run over
// K inside each block, so their laps depend on K, not on the grid (the harness's grid cap
// does not apply). Each launcher reports its grid and blocks/SM (queried once) to the table.
// ---------------------------------------------------------------------------------------------
inline dim3 grid_over_c(const GemmArgs& g, int tile_cols, int tile_rows) {
  return dim3(static_cast<unsigned>((g.N + tile_cols - 1) / tile_cols),
              static_cast<unsigned>((g.M + tile_rows - 1) / tile_rows));
}

inline void record(dim3 grid, int per_sm) { tut::record_grid(grid.x * grid.y, per_sm); }

inline void launch_gemm_v1(const GemmArgs& g, cudaStream_t s) {
  static const int per_sm = tut::max_blocks_per_sm(gemm_v1_naive_kernel, NAIVE_BX * NAIVE_BY);
  const dim3 grid = grid_over_c(g, NAIVE_BX, NAIVE_BY);
  record(grid, per_sm);
  gemm_v1_naive_kernel<<<grid, dim3(NAIVE_BX, NAIVE_BY), 0, s>>>(g);
}

inline void launch_gemm_v2(const GemmArgs& g, cudaStream_t s) {
  static const int per_sm = tut::max_blocks_per_sm(gemm_v2_smem_kernel, T2 * T2);
  const dim3 grid = grid_over_c(g, T2, T2);
  record(grid, per_sm);
  gemm_v2_smem_kernel<<<grid, dim3(T2, T2), 0, s>>>(g);
}

inline void launch_gemm_v3(const GemmArgs& g, cudaStream_t s) {
  static const int per_sm = tut::max_blocks_per_sm(gemm_v3_register_kernel, THREADS);
  const dim3 grid = grid_over_c(g, BN, BM);
  record(grid, per_sm);
  gemm_v3_register_kernel<<<grid, THREADS, 0, s>>>(g);
}

/// Above 48 KiB of dynamic shared memory a kernel must opt in (tut::opt_in_dynamic_smem); done
/// once per kernel, with the occupancy query, so timed launches make no host queries.
template <class Kernel>
int opt_in_once(Kernel kernel, int smem) {
  tut::opt_in_dynamic_smem(kernel, smem);
  return tut::max_blocks_per_sm(kernel, THREADS, smem);
}

template <int STAGES>
void launch_gemm_v4(const GemmArgs& g, cudaStream_t s) {
  constexpr int smem = STAGES * STAGE_BYTES;  // 4 stages: 64 KiB
  static const int per_sm = opt_in_once(gemm_v4_cp_async_kernel<STAGES>, smem);
  const dim3 grid = grid_over_c(g, BN, BM);
  record(grid, per_sm);
  gemm_v4_cp_async_kernel<STAGES><<<grid, THREADS, smem, s>>>(g);
}

/// v5 (STAGES = 4, KDEPTH = BK = 16) and v7 (KDEPTH = V7_KDEPTH) on a Problem of main.cu: its
/// tensor_maps(KDEPTH) have boxes [BM x KDEPTH] of A and [KDEPTH x BN] of B.
template <int STAGES, int KDEPTH, class TmaProblem>
void launch_gemm_v5(TmaProblem& p, cudaStream_t s) {
  // v5: 4 x 16 KiB + 128 = 65664 B; v7: 3 x 32 KiB + 128 = 98432 B. Both leave room for two
  // blocks in the H200's 228 KiB of shared memory per SM (1 KiB of it reserved per block).
  constexpr int smem = STAGES * stage_bytes(KDEPTH) + 128;  // + room to align the ring to 128 B
  static_assert(2 * (smem + 1024) <= 228 * 1024, "two blocks per SM, as the launch bounds say");
  static const int per_sm = opt_in_once(gemm_v5_tma_kernel<STAGES, KDEPTH>, smem);
  const auto& maps = p.tensor_maps(KDEPTH);
  const GemmArgs g = p.args();
  const dim3 grid = grid_over_c(g, BN, BM);
  record(grid, per_sm);
  gemm_v5_tma_kernel<STAGES, KDEPTH><<<grid, THREADS, smem, s>>>(maps.a, maps.b, g);
}

inline void launch_gemm_v6(const CUtensorMap& tmap_a, const CUtensorMap& tmap_b,
                           const GemmArgs& g, cudaStream_t s) {
  constexpr int smem = STAGES * STAGE_BYTES + 128;  // v5's ring
  static const int per_sm = opt_in_once(gemm_v6_empty_ring_kernel<STAGES>, smem);
  const dim3 grid = grid_over_c(g, BN, BM);
  record(grid, per_sm);
  gemm_v6_empty_ring_kernel<STAGES><<<grid, THREADS, smem, s>>>(tmap_a, tmap_b, g);
}

}  // namespace ch15
