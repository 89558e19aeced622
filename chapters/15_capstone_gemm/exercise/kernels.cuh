// EXERCISE for chapter 15_capstone_gemm, generated from ../kernels.cuh by tools/make_exercise.py.
// Fill in every TODO(exercise) until `chNN_topic_exercise` reports PASS.
// Chapter 15: capstone - single-precision GEMM, C = A x B, built up one step at a time
//
// What it teaches: how the copy techniques of the earlier chapters pay off in a real
// compute kernel. Each step is a variant in one registry, measured in the same run against
// cuBLAS SGEMM (fp32 FFMA, TF32 off), which is also the correctness oracle at large sizes:
//   v1 naive           one thread per C element, operands straight from global memory
//   v2 smem tiles      32x32 tiles staged in shared memory with synchronous loads
//   v3 register tiles  128x128 block tile, each thread an 8x8 sub-tile in registers,
//                      synchronous LDG -> STS loads (the block now waits for every tile)
//   v4 cp.async        v3 with a STAGES-deep ring of cp.async.cg 16-byte copies (zero-fill
//                      at the matrix edges through the src-size operand)
//   v5 TMA (sm_90)     v3 fed by 2D TMA boxes through an mbarrier ring; one thread issues
//   cublas             cublasSgemm, CUBLAS_DEFAULT_MATH (no TF32): the ceiling
//   v9 (negative)      v2 with B's tile loaded at A's block offset (the classic bug that
//                      constant inputs hide)
// Layout: row-major, every row padded to a 16-byte pitch (lda = K rounded up to 4 floats):
// the precondition for 16-byte cp.async and for TMA global strides. Padding holds NaN, so a
// kernel that reads past an edge poisons its own result and fails the check.
//
// Minimum compute capability: 8.0 (v5 needs 9.0 and is skipped below it).
// Run:    build/bin/ch15_capstone_gemm [--size=4096] [--variant=v4_cp_async,cublas] [--list]
// Output: the harness table in GFLOP/s with % of cuBLAS, then a size sweep 1024..8192
//         (written beside --json as <json>.sweep.json).
#pragma once

#include <cublas_v2.h>
#include <cuda.h>  // CUtensorMap (types only; the encoder is fetched at run time)
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#include <cuda/ptx>
#endif

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "common/device_buffer.cuh"
#include "common/harness.cuh"

/// Check a cuBLAS call; on failure print the status, the expression and file:line, exit 1.
#define CUBLAS_CHECK(expr)                                                              \
  do {                                                                                  \
    const cublasStatus_t ch15_st_ = (expr);                                             \
    if (ch15_st_ != CUBLAS_STATUS_SUCCESS) {                                            \
      std::fprintf(stderr, "cuBLAS error %d (%s)\n  in: %s\n  at %s:%d\n",              \
                   static_cast<int>(ch15_st_), cublasGetStatusString(ch15_st_), #expr,  \
                   __FILE__, __LINE__);                                                 \
      std::exit(tut::kExitCudaError);                                                   \
    }                                                                                   \
  } while (0)

namespace ch15 {

// ---------------------------------------------------------------------------------------------
// Constants
// ---------------------------------------------------------------------------------------------
constexpr int NAIVE_BX = 32, NAIVE_BY = 8;  // v1: 256 threads, x along the columns of C
constexpr int T2 = 32;                      // v2/v9: 32x32 tiles, 1024 threads per block

// v3..v5: the register-blocked kernel. 256 threads in a 16x16 grid, each owning 8x8 outputs.
constexpr int BM = 128, BN = 128, BK = 16;  // block tile of C, and the K-depth of one stage
constexpr int TM = 8, TN = 8;               // per-thread sub-tile of C (64 accumulators)
constexpr int THREADS = (BM / TM) * (BN / TN);                 // 256
constexpr int STAGES = 4;                                      // ring depth for v4 and v5
constexpr int STAGE_FLOATS = BM * BK + BK * BN;                // [A 128x16 | B 16x128]
constexpr int STAGE_BYTES = STAGE_FLOATS * 4;                  // 16 KiB per stage
constexpr int A_CHUNKS = BM * BK / 4 / THREADS;                // 16-byte copies per thread: 2
constexpr int B_CHUNKS = BK * BN / 4 / THREADS;                // 2
static_assert(THREADS == 256 && A_CHUNKS == 2 && B_CHUNKS == 2, "tiling assumptions");

/// Row pitch in floats: the column count rounded up to 16 bytes.
__host__ __device__ constexpr int pitch_of(int cols) { return (cols + 3) / 4 * 4; }

/// One GEMM call: C[M x N] = A[M x K] * B[K x N], row-major with pitches lda, ldb, ldc.
struct GemmArgs {
  const float* A;
  const float* B;
  float* C;
  int M, N, K;
  int lda, ldb, ldc;
};

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
// The register-blocked core shared by v3, v4 and v5
// ---------------------------------------------------------------------------------------------
// Thread t = 16*ty + tx owns rows ty*8 .. ty*8+7 of the block tile and two groups of four
// columns, tx*4 .. tx*4+3 and 64 + tx*4 .. 64 + tx*4+3 (split, so a warp's float4 reads of a
// B row are 16 consecutive 16-byte words: conflict-free). Shared layout of one stage:
//   s_a [BM][BK]  row-major, k contiguous  (A rows as they sit in global memory)
//   s_b [BK][BN]  row-major, n contiguous
// Per pair of k: 8 LDS.64 of A (lanes 0-15 share ty, so each is a broadcast), 4 LDS.128 of B,
// then 128 FFMA - the FFMA:LDS ratio that lets the FMA pipes, not shared memory, set the pace.
__device__ __forceinline__ void mma_block_tile(const float* s_a, const float* s_b,
                                               float (&acc)[TM][TN], int ty, int tx) {
#pragma unroll
  for (int kk = 0; kk < BK; kk += 2) {
    float2 a[TM];
#pragma unroll
    for (int i = 0; i < TM; ++i)
      a[i] = *reinterpret_cast<const float2*>(s_a + (ty * TM + i) * BK + kk);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const float4 b0 = *reinterpret_cast<const float4*>(s_b + (kk + h) * BN + tx * 4);
      const float4 b1 = *reinterpret_cast<const float4*>(s_b + (kk + h) * BN + BN / 2 + tx * 4);
      const float b[TN] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
      for (int i = 0; i < TM; ++i) {
        const float av = h == 0 ? a[i].x : a[i].y;
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(av, b[j], acc[i][j]);
      }
    }
  }
}

/// Write the thread's 8x8 sub-tile: float4 stores where four columns are inside C (the pitch
/// keeps them 16-byte aligned), scalar stores on the ragged right edge.
__device__ __forceinline__ void store_block_tile(const GemmArgs& g, const float (&acc)[TM][TN],
                                                 int m0, int n0, int ty, int tx) {
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int row = m0 + ty * TM + i;
    if (row >= g.M) continue;
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int col = n0 + half * (BN / 2) + tx * 4;
      float* dst = g.C + row * g.ldc + col;
      const float* v = &acc[i][half * 4];
      if (col + 4 <= g.N) {
        *reinterpret_cast<float4*>(dst) = make_float4(v[0], v[1], v[2], v[3]);
      } else {
#pragma unroll
        for (int j = 0; j < 4; ++j)
          if (col + j < g.N) dst[j] = v[j];
      }
    }
  }
}

/// Which 16-byte chunks of a stage this thread copies, worked out once per block.
/// A tile [128 x 16]: 512 chunks, 4 per row; thread t takes chunk t (row t/4, k 4*(t%4)) and
/// chunk t + 256 (64 rows further down). B tile [16 x 128]: 512 chunks, 32 per row; thread t
/// takes row t/32, columns 4*(t%32) .. +3, and the same columns 8 rows further down. A warp
/// thus reads 8 A rows x 64 B or one 512-byte B row: whole 32-byte sectors. In both tiles the
/// thread's first chunk lands at float offset 4t and its second at 4t + 1024.
/// Per stage only the k offset moves, so the per-stage cost is a few adds and compares.
struct TileLoader {
  int a_index;       // floats from A to the first chunk at k0 = 0
  int a_k;           // the chunk's k within the tile: 0, 4, 8 or 12
  bool a_row_ok[2];  // the chunk's row is inside M (first and second chunk)
  int b_index;       // floats from B to the first chunk at k0 = 0
  int b_row;         // the first chunk's k row within the tile: 0..7
  int b_cols;        // floats of the chunk inside N (0..4): the same at every k

  __device__ __forceinline__ TileLoader(const GemmArgs& g, int t, int m0, int n0) {
    const int a_r = t / (BK / 4);
    a_k = (t % (BK / 4)) * 4;
    a_index = (m0 + a_r) * g.lda + a_k;
    a_row_ok[0] = m0 + a_r < g.M;
    a_row_ok[1] = m0 + a_r + BM / 2 < g.M;
    b_row = t / (BN / 4);
    const int b_n = (t % (BN / 4)) * 4;
    b_index = b_row * g.ldb + n0 + b_n;
    b_cols = clamp_valid(g.N - (n0 + b_n));
  }
  static __device__ __forceinline__ int clamp_valid(int left) {
    return left < 0 ? 0 : (left > 4 ? 4 : left);
  }
  /// Floats inside the matrix for chunk p (0 or 1) of A / of B at tile depth k0.
  __device__ __forceinline__ int a_valid(const GemmArgs& g, int p, int k0) const {
    return a_row_ok[p] ? clamp_valid(g.K - (k0 + a_k)) : 0;
  }
  __device__ __forceinline__ int b_valid(const GemmArgs& g, int p, int k0) const {
    return k0 + b_row + p * (BK / 2) < g.K ? b_cols : 0;
  }
  __device__ __forceinline__ int a_offset(const GemmArgs& g, int p, int k0) const {
    return a_index + p * (BM / 2) * g.lda + k0;
  }
  __device__ __forceinline__ int b_offset(const GemmArgs& g, int p, int k0) const {
    return b_index + (k0 + p * (BK / 2)) * g.ldb;
  }
};
static_assert(A_CHUNKS == 2 && B_CHUNKS == 2 && BM * BK / 4 == 2 * THREADS, "TileLoader layout");

/// Synchronous guarded 16-byte load (v3): a float4 LDG when the chunk is whole, else scalars
/// and zeros - never a read past the edge into the (NaN) padding.
__device__ __forceinline__ float4 load_chunk(const float* src, int valid) {
  if (valid == 4) return *reinterpret_cast<const float4*>(src);
  float v[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  for (int j = 0; j < valid; ++j) v[j] = src[j];
  return make_float4(v[0], v[1], v[2], v[3]);
}

// ---------------------------------------------------------------------------------------------
// v3: register-blocked, synchronous loads
// ---------------------------------------------------------------------------------------------
// The same core as v4/v5; the tiles arrive the old way: LDG into registers, STS, BAR.SYNC.
// Each block now does 128x128x16 FMAs per 16 KiB staged (32 FMA per byte moved into shared
// memory, 64x more than v2's block), so it is hungry: with two blocks per SM the LDG latency
// of every stage is exposed, because nothing else is in flight while the block waits.
__global__ void __launch_bounds__(THREADS, 2) gemm_v3_register_kernel(GemmArgs g) {
  __shared__ __align__(16) float s_a[BM * BK];  // [128 x 16] floats
  __shared__ __align__(16) float s_b[BK * BN];  // [16 x 128] floats
  const int t = threadIdx.x, tx = t % 16, ty = t / 16;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const TileLoader ld(g, t, m0, n0);
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
      *reinterpret_cast<float4*>(s_a + 4 * t + p * 1024) = ra[p];
      *reinterpret_cast<float4*>(s_b + 4 * t + p * 1024) = rb[p];
    }
    __syncthreads();  // the stage is complete
    mma_block_tile(s_a, s_b, acc, ty, tx);
    __syncthreads();  // everyone has read the stage before it is overwritten
  }
  store_block_tile(g, acc, m0, n0, ty, tx);
}

// ---------------------------------------------------------------------------------------------
// v4: register-blocked, STAGES-deep cp.async pipeline
// ---------------------------------------------------------------------------------------------
// cp.async.cg.shared.global [dst], [src], 16, src_size: the LSU copies 16 bytes global ->
// shared through L2 (bypassing L1: .cg), without a register round trip, and writes zeros for
// bytes src_size..15. So a chunk that straddles the right/bottom edge reads only its valid
// floats (src_size = 4 * valid) and a chunk wholly outside reads nothing (src_size = 0; the
// address is then never dereferenced, we pass the matrix base). SASS: LDGSTS.E.BYPASS.128.
__device__ __forceinline__ void cp_async_16_zfill(float* s_dst, const float* g_src, int src_bytes) {
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(s_dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(g_src),
               "r"(src_bytes)
               : "memory");
}
// commit_group closes this thread's copies issued since the last commit into one group
// (SASS LDGDEPBAR); wait_group N blocks until at most N of this thread's groups are pending
// (SASS DEPBAR.LE SB0, N). Both are per thread: the BAR.SYNC after the wait publishes the
// other threads' copies.
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

__device__ __forceinline__ void issue_stage_cp_async(const GemmArgs& g, const TileLoader& ld,
                                                     float* s_stage, int t, int k0) {
  float* s_a = s_stage;            // [128 x 16]
  float* s_b = s_stage + BM * BK;  // [16 x 128]
#pragma unroll
  for (int p = 0; p < 2; ++p) {
    const int va = ld.a_valid(g, p, k0), vb = ld.b_valid(g, p, k0);
    cp_async_16_zfill(s_a + 4 * t + p * 1024, va ? g.A + ld.a_offset(g, p, k0) : g.A, 4 * va);
    cp_async_16_zfill(s_b + 4 * t + p * 1024, vb ? g.B + ld.b_offset(g, p, k0) : g.B, 4 * vb);
  }
}

template <int NSTAGES>
__global__ void __launch_bounds__(THREADS, 2) gemm_v4_cp_async_kernel(GemmArgs g) {
  extern __shared__ __align__(128) float s_ring[];  // NSTAGES x [A 128x16 | B 16x128]
  const int t = threadIdx.x, tx = t % 16, ty = t / 16;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const int num_k_tiles = (g.K + BK - 1) / BK;
  const TileLoader ld(g, t, m0, n0);
  float acc[TM][TN] = {};

  // prologue: fill NSTAGES-1 slots. Commit even when there is no tile, so that group number
  // always equals k-tile number (the wait below counts groups, not tiles).
#pragma unroll
  for (int s = 0; s < NSTAGES - 1; ++s) {
    if (s < num_k_tiles) issue_stage_cp_async(g, ld, s_ring + s * STAGE_FLOATS, t, s * BK);
    cp_async_commit();
  }
  // steady state: wait for tile kt, refill the slot freed by tile kt-1, compute tile kt.
  for (int kt = 0; kt < num_k_tiles; ++kt) {
    // kt + NSTAGES - 1 groups are committed; allowing NSTAGES-2 pending means groups 0..kt
    // are complete: this thread's copies of tile kt have landed in slot kt % NSTAGES.
    cp_async_wait<NSTAGES - 2>();
    // Two jobs: (1) everyone's copies of tile kt are visible to everyone; (2) everyone has
    // finished computing on tile kt-1, so its slot, (kt-1) % NSTAGES, may be refilled.
    __syncthreads();
    // TODO(exercise): refill the slot tile kt-1 just freed with tile kt + NSTAGES - 1 (if it exists)
    cp_async_commit();
    const float* s_stage = s_ring + (kt % NSTAGES) * STAGE_FLOATS;
    mma_block_tile(s_stage, s_stage + BM * BK, acc, ty, tx);  // overlaps the copies in flight
  }
  // epilogue: nothing left to drain (the trailing groups are empty).
  store_block_tile(g, acc, m0, n0, ty, tx);
}

// ---------------------------------------------------------------------------------------------
// v5: register-blocked, tiles fed by TMA through an mbarrier ring (sm_90)
// ---------------------------------------------------------------------------------------------
// Per stage, thread 0 issues two cp.async.bulk.tensor.2d boxes - A [128 rows x 16 k] and
// B [16 k x 128 cols] - and one mbarrier.arrive.expect_tx of STAGE_BYTES on full[slot]. The
// Tensor Memory Accelerator walks the boxes, writes them dense into shared memory (the same
// layout v4 builds with 512 LDGSTS), zero-fills whatever lies outside the tensor (the ragged
// edges: no bounds code at all), and completes the transaction bytes on full[slot]. The
// transaction count is always the full box, including the zero-filled part.
//
// Phase invariant: full[s] completes its phase n when tile s + n*NSTAGES has landed, so the
// wait for tile kt is on parity (kt / NSTAGES) & 1. Refill of slot s for tile kt+NSTAGES is
// issued only after the block barrier that follows everyone's reads of tile kt, so the
// barrier cannot run ahead by two phases (which parity could not tell apart).
template <int NSTAGES>
__global__ void __launch_bounds__(THREADS, 2)
    gemm_v5_tma_kernel(const __grid_constant__ CUtensorMap tmap_a,
                       const __grid_constant__ CUtensorMap tmap_b, GemmArgs g) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  namespace ptx = cuda::ptx;
  extern __shared__ unsigned char s_raw[];
  __shared__ uint64_t full[NSTAGES];
  // TMA destinations must be 128-byte aligned; the launcher allocates 128 spare bytes. The
  // offset is added to s_raw itself (not computed through an integer), so the compiler still
  // knows the ring is shared memory and emits LDS rather than generic loads.
  const unsigned misalign = static_cast<unsigned>(__cvta_generic_to_shared(s_raw)) & 127u;
  float* s_ring = reinterpret_cast<float*>(s_raw + ((128u - misalign) & 127u));
  const int t = threadIdx.x, tx = t % 16, ty = t / 16;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const int num_k_tiles = (g.K + BK - 1) / BK;
  float acc[TM][TN] = {};

  if (t == 0) {
    for (int s = 0; s < NSTAGES; ++s) ptx::mbarrier_init(&full[s], 1);  // one arrive: thread 0
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);    // visible to the TMA unit
  }
  __syncthreads();

  auto issue = [&](int kt, int slot) {  // thread 0 only
    float* s_a = s_ring + slot * STAGE_FLOATS;
    float* s_b = s_a + BM * BK;
    ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared,
                                   &full[slot], static_cast<uint32_t>(STAGE_BYTES));
    const int32_t coords_a[2] = {kt * BK, m0};  // innermost first: (k, row)
    const int32_t coords_b[2] = {n0, kt * BK};  // (col, k)
    ptx::cp_async_bulk_tensor(ptx::space_shared, ptx::space_global, s_a, &tmap_a, coords_a,
                              &full[slot]);
    ptx::cp_async_bulk_tensor(ptx::space_shared, ptx::space_global, s_b, &tmap_b, coords_b,
                              &full[slot]);
  };
  // prologue: every slot gets a tile.
  if (t == 0)
    for (int s = 0; s < NSTAGES && s < num_k_tiles; ++s) issue(s, s);
  // steady state
  for (int kt = 0; kt < num_k_tiles; ++kt) {
    const int slot = kt % NSTAGES;
    const uint32_t parity = static_cast<uint32_t>(kt / NSTAGES) & 1u;
    // Invariant: full[slot] completes phase kt / NSTAGES when tile kt has landed. try_wait
    // has acquire semantics, so the TMA's shared-memory writes are visible after it.
    while (!ptx::mbarrier_try_wait_parity(&full[slot], parity)) {
    }
    const float* s_stage = s_ring + slot * STAGE_FLOATS;
    mma_block_tile(s_stage, s_stage + BM * BK, acc, ty, tx);
    // Everyone has finished reading slot `slot`: only now may the TMA overwrite it.
    __syncthreads();
    if (t == 0 && kt + NSTAGES < num_k_tiles) issue(kt + NSTAGES, slot);
  }
  store_block_tile(g, acc, m0, n0, ty, tx);
#else
  (void)tmap_a;
  (void)tmap_b;
  (void)g;
#endif
}

// ---------------------------------------------------------------------------------------------
// v9 (negative): v2 with B's tile loaded at A's block offset
// ---------------------------------------------------------------------------------------------
// The column of B is taken from blockIdx.y (the block's row offset, which A uses) instead of
// blockIdx.x. On the diagonal blocks the two agree, so a one-block matrix passes, and with
// constant inputs every block passes. With unique inputs every off-diagonal block is wrong.
__global__ void __launch_bounds__(T2* T2) gemm_v9_wrong_b_offset_kernel(GemmArgs g) {
  __shared__ float s_a[T2][T2];
  __shared__ float s_b[T2][T2];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * T2 + ty, col = blockIdx.x * T2 + tx;
  const int b_col = blockIdx.y * T2 + tx;  // BUG: should be blockIdx.x * T2 + tx (== col)
  float acc = 0.0f;
  for (int k0 = 0; k0 < g.K; k0 += T2) {
    s_a[ty][tx] = row < g.M && k0 + tx < g.K ? g.A[row * g.lda + k0 + tx] : 0.0f;
    s_b[ty][tx] = k0 + ty < g.K && b_col < g.N ? g.B[(k0 + ty) * g.ldb + b_col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < T2; ++k) acc = fmaf(s_a[ty][k], s_b[k][tx], acc);
    __syncthreads();
  }
  if (row < g.M && col < g.N) g.C[row * g.ldc + col] = acc;
}

// ---------------------------------------------------------------------------------------------
// Launchers
// ---------------------------------------------------------------------------------------------
inline dim3 block_tile_grid(const GemmArgs& g) {
  return dim3(static_cast<unsigned>((g.N + BN - 1) / BN), static_cast<unsigned>((g.M + BM - 1) / BM));
}

inline void launch_gemm_v1(const GemmArgs& g, cudaStream_t s) {
  const dim3 block(NAIVE_BX, NAIVE_BY);
  const dim3 grid((g.N + NAIVE_BX - 1) / NAIVE_BX, (g.M + NAIVE_BY - 1) / NAIVE_BY);
  gemm_v1_naive_kernel<<<grid, block, 0, s>>>(g);
}

inline void launch_gemm_v2(const GemmArgs& g, cudaStream_t s) {
  const dim3 grid((g.N + T2 - 1) / T2, (g.M + T2 - 1) / T2);
  gemm_v2_smem_kernel<<<grid, dim3(T2, T2), 0, s>>>(g);
}

inline void launch_gemm_v3(const GemmArgs& g, cudaStream_t s) {
  gemm_v3_register_kernel<<<block_tile_grid(g), THREADS, 0, s>>>(g);
}

template <int NSTAGES = STAGES>
void launch_gemm_v4(const GemmArgs& g, cudaStream_t s) {
  constexpr int smem = NSTAGES * STAGE_BYTES;  // 4 stages: 64 KiB, above the 48 KiB default
  static bool attribute_set = false;            // once per process (one device per run)
  if (!attribute_set) {
    CUDA_CHECK(cudaFuncSetAttribute(gemm_v4_cp_async_kernel<NSTAGES>,
                                    cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    attribute_set = true;
  }
  gemm_v4_cp_async_kernel<NSTAGES><<<block_tile_grid(g), THREADS, smem, s>>>(g);
}

inline void launch_gemm_v5(const CUtensorMap& tmap_a, const CUtensorMap& tmap_b,
                           const GemmArgs& g, cudaStream_t s) {
  constexpr int smem = STAGES * STAGE_BYTES + 128;  // + room to align the ring to 128 B
  static bool attribute_set = false;
  if (!attribute_set) {
    CUDA_CHECK(cudaFuncSetAttribute(gemm_v5_tma_kernel<STAGES>,
                                    cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    attribute_set = true;
  }
  gemm_v5_tma_kernel<STAGES><<<block_tile_grid(g), THREADS, smem, s>>>(tmap_a, tmap_b, g);
}

inline void launch_gemm_v9(const GemmArgs& g, cudaStream_t s) {
  const dim3 grid((g.N + T2 - 1) / T2, (g.M + T2 - 1) / T2);
  gemm_v9_wrong_b_offset_kernel<<<grid, dim3(T2, T2), 0, s>>>(g);
}

/// cuBLAS is column-major. A row-major [R x C] matrix with pitch ld is, to cuBLAS, the
/// column-major [C x R] matrix (its transpose) with leading dimension ld. So row-major
/// C = A * B is computed as the column-major C^T = B^T * A^T: swap the operands, pass
/// (n, m, k) - and no transpose flags.
inline void launch_cublas(cublasHandle_t handle, const GemmArgs& g, cudaStream_t s) {
  const float alpha = 1.0f, beta = 0.0f;
  CUBLAS_CHECK(cublasSetStream(handle, s));
  CUBLAS_CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, g.N, g.M, g.K, &alpha, g.B, g.ldb,
                           g.A, g.lda, &beta, g.C, g.ldc));
}

// ---------------------------------------------------------------------------------------------
// TMA descriptors (host). cuTensorMapEncodeTiled is a driver API call; it is fetched at run
// time through the runtime, so the binary does not link libcuda (it must start without one).
// ---------------------------------------------------------------------------------------------
inline PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000,
                                              cudaEnableDefault, &found));
  if (found != cudaDriverEntryPointSuccess || fn == nullptr) {
    std::fprintf(stderr, "cuTensorMapEncodeTiled not available from this driver\n");
    std::exit(tut::kExitCudaError);
  }
  return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
}

/// A 2D fp32 tensor map over a row-major [rows x cols] matrix of pitch `ld` floats, read in
/// boxes of [box_rows x box_cols]. Out-of-bounds box elements are filled with zeros.
/// @note The pitch in bytes must be a multiple of 16 (TMA's rule) - hence the padded rows.
inline CUtensorMap make_tensor_map(const float* base, int rows, int cols, int ld, int box_rows,
                                   int box_cols) {
  static const PFN_cuTensorMapEncodeTiled_v12000 encode = tensor_map_encoder();
  CUtensorMap map;
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(ld) * sizeof(float)};  // dim 1, bytes
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(box_cols), static_cast<cuuint32_t>(box_rows)};
  const cuuint32_t elem_strides[2] = {1, 1};
  CU_CHECK(encode(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, const_cast<float*>(base), dims,
                  strides, box, elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                  CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                  CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  return map;
}

// ---------------------------------------------------------------------------------------------
// CPU reference: double accumulation, rounded to float once at the end.
// ---------------------------------------------------------------------------------------------
inline std::vector<float> reference_gemm(const std::vector<float>& a, const std::vector<float>& b,
                                         int M, int N, int K, int lda, int ldb) {
  std::vector<float> c(static_cast<std::size_t>(M) * N);
  std::vector<double> row(static_cast<std::size_t>(N));
  for (int i = 0; i < M; ++i) {
    std::fill(row.begin(), row.end(), 0.0);
    for (int k = 0; k < K; ++k) {
      const double av = a[static_cast<std::size_t>(i) * lda + k];
      const float* brow = b.data() + static_cast<std::size_t>(k) * ldb;
      for (int j = 0; j < N; ++j) row[j] += av * brow[j];
    }
    for (int j = 0; j < N; ++j) c[static_cast<std::size_t>(i) * N + j] = static_cast<float>(row[j]);
  }
  return c;
}

/// Tolerance: |got - want| <= K * 2^-20 (plus 2^-20). Inputs lie in [-1, 1), so each of the K
/// fp32 rounding steps of an accumulation contributes at most about 2^-24 * |partial sum|,
/// and random signs make the sum grow like sqrt(K): K * 2^-20 leaves a wide margin for any
/// fp32 summation order, while a wrong element is off by O(1) and TF32 inputs (10-bit
/// mantissas, ~2^-11 relative error per product) are, at large K, off by more than it allows.
inline double abs_tolerance(int K) { return (static_cast<double>(K) + 1.0) / double(1 << 20); }

// ---------------------------------------------------------------------------------------------
// The problem: A [M x K], B [K x N], C [M x N], row-major, padded pitches. The chapter runs
// square M = N = K = --size; the tests use any shape.
// ---------------------------------------------------------------------------------------------
/// Above this many multiply-adds the CPU reference is too slow; cuBLAS is the oracle there.
inline constexpr double kCpuReferenceMaxMacs = 3.0e8;

struct Shape {
  int M, N, K;
};

struct Problem {
  explicit Problem(const tut::RunConfig& cfg)
      : Problem(Shape{static_cast<int>(cfg.size), static_cast<int>(cfg.size),
                      static_cast<int>(cfg.size)},
                cfg.seed) {}

  Problem(Shape s, std::uint64_t seed)
      : M(s.M), N(s.N), K(s.K), lda(pitch_of(s.K)), ldb(pitch_of(s.N)), ldc(pitch_of(s.N)),
        d_a(static_cast<std::size_t>(M) * lda), d_b(static_cast<std::size_t>(K) * ldb),
        d_c(static_cast<std::size_t>(M) * ldc) {
    h_a = padded_fill(M, K, lda, seed);
    h_b = padded_fill(K, N, ldb, seed ^ 0x9E3779B97F4A7C15ull);
    d_a.upload(h_a);
    d_b.upload(h_b);
    CUBLAS_CHECK(cublasCreate(&blas));
    // No TF32: CUBLAS_DEFAULT_MATH keeps cublasSgemm on fp32 FFMA kernels (TF32 tensor cores
    // would need CUBLAS_TF32_TENSOR_OP_MATH).
    CUBLAS_CHECK(cublasSetMathMode(blas, CUBLAS_DEFAULT_MATH));
    if (static_cast<double>(M) * N * K <= kCpuReferenceMaxMacs) {
      want = reference_gemm(h_a, h_b, M, N, K, lda, ldb);
      oracle = "CPU fp64";
    } else {  // once per Problem: cuBLAS's answer is the reference at large sizes
      launch_cublas(blas, args(), nullptr);
      CUDA_CHECK(cudaDeviceSynchronize());
      want = compact(d_c.download(nullptr));
      oracle = "cuBLAS";
    }
  }
  ~Problem() {
    if (blas) cublasDestroy(blas);
  }
  Problem(const Problem&) = delete;
  Problem& operator=(const Problem&) = delete;

  void poison(cudaStream_t s) { d_c.poison(s); }
  tut::VerifyResult verify(cudaStream_t s, int /*reference*/) {
    const std::vector<float> got = compact(d_c.download(s));
    tut::VerifyResult r = tut::compare_close_floats(got.data(), want.data(), got.size(),
                                                    abs_tolerance(K), 0.0);
    r.what += " vs " + oracle;
    return r;
  }
  double work() const { return 2.0 * M * N * K; }
  std::string describe() const {
    return "M=" + std::to_string(M) + " N=" + std::to_string(N) + " K=" + std::to_string(K) +
           " fp32 (" + oracle + " reference)";
  }

  GemmArgs args() { return GemmArgs{d_a.data(), d_b.data(), d_c.data(), M, N, K, lda, ldb, ldc}; }
  /// The TMA descriptors, encoded on first use (they hold the buffers' addresses).
  void ensure_tensor_maps() {
    if (have_tensor_maps) return;
    tmap_a = make_tensor_map(d_a.data(), M, K, lda, BM, BK);
    tmap_b = make_tensor_map(d_b.data(), K, N, ldb, BK, BN);
    have_tensor_maps = true;
  }

  /// Row-major [rows x cols] of values in [-1, 1) on a 2^-19 grid, unique within each 2^20
  /// window, in rows of pitch `ld`; the padding columns hold NaN.
  static std::vector<float> padded_fill(int rows, int cols, int ld, std::uint64_t seed) {
    std::vector<float> dense(static_cast<std::size_t>(rows) * cols);
    tut::fill_unique_exact_floats(dense.data(), dense.size(), seed);
    std::vector<float> out(static_cast<std::size_t>(rows) * ld,
                           std::numeric_limits<float>::quiet_NaN());
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c)
        out[static_cast<std::size_t>(r) * ld + c] =
            dense[static_cast<std::size_t>(r) * cols + c] * (1.0f / 512.0f);
    return out;
  }
  /// The M x N valid elements of a pitched C.
  std::vector<float> compact(const std::vector<float>& pitched) const {
    std::vector<float> out(static_cast<std::size_t>(M) * N);
    for (int r = 0; r < M; ++r)
      for (int c = 0; c < N; ++c)
        out[static_cast<std::size_t>(r) * N + c] = pitched[static_cast<std::size_t>(r) * ldc + c];
    return out;
  }

  int M, N, K, lda, ldb, ldc;
  tut::DeviceBuffer<float> d_a, d_b, d_c;
  std::vector<float> h_a, h_b, want;
  std::string oracle;
  cublasHandle_t blas = nullptr;
  CUtensorMap tmap_a{}, tmap_b{};
  bool have_tensor_maps = false;
};

// ---------------------------------------------------------------------------------------------
// The variant registry
// ---------------------------------------------------------------------------------------------
inline std::vector<tut::Variant<Problem>> variants() {
  using V = tut::Variant<Problem>;
  std::vector<V> v;
  v.push_back(V{"v1_naive", "v1 naive", "one thread per C element, operands from global",
                [](Problem& p, cudaStream_t s) { launch_gemm_v1(p.args(), s); }});
  v.push_back(V{"v2_smem", "v2 smem tiles 32x32", "32x32 tiles staged LDG->STS, BAR.SYNC",
                [](Problem& p, cudaStream_t s) { launch_gemm_v2(p.args(), s); }});
  v.push_back(V{"v3_register", "v3 register 8x8, sync",
                "128x128x16 block tile, 8x8 per thread, synchronous loads",
                [](Problem& p, cudaStream_t s) { launch_gemm_v3(p.args(), s); }});
  v.push_back(V{"v4_cp_async_s2", "v4 register + cp.async 2-stage",
                "v3 double-buffered: one tile in flight while one is computed",
                [](Problem& p, cudaStream_t s) { launch_gemm_v4<2>(p.args(), s); }});
  v.push_back(V{"v4_cp_async", "v4 register + cp.async 4-stage",
                "v3 fed by a 4-stage cp.async.cg 16 B ring, zero-fill at the edges",
                [](Problem& p, cudaStream_t s) { launch_gemm_v4<STAGES>(p.args(), s); }});
  v.push_back(V{"v5_tma", "v5 register + TMA 4-stage",
                "v3 fed by 2D TMA boxes through a 4-slot mbarrier ring (sm_90)",
                [](Problem& p, cudaStream_t s) {
                  p.ensure_tensor_maps();
                  launch_gemm_v5(p.tmap_a, p.tmap_b, p.args(), s);
                }});
  v.back().min_cc = 90;
  v.push_back(V{"cublas", "cuBLAS SGEMM (TF32 off)", "cublasSgemm, CUBLAS_DEFAULT_MATH: the ceiling",
                [](Problem& p, cudaStream_t s) { launch_cublas(p.blas, p.args(), s); }});
  v.back().is_ceiling = true;
  v.push_back(V{"v9_wrong_b_offset", "v9 BROKEN: B tile at A's offset",
                "negative: v2 loading B's tile with the row-block offset; must FAIL",
                [](Problem& p, cudaStream_t s) { launch_gemm_v9(p.args(), s); }});
  v.back().negative = true;
  return v;
}

}  // namespace ch15
