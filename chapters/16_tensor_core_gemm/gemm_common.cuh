/// @file gemm_common.cuh
/// @brief Chapter 16: what every GEMM step shares - the arguments, the tile walk, the TMA
///        copies spelled through `cuda::ptx`, one stage of wgmma, the ring's two bounded waits
///        and one k-tile's batch of MMAs as named steps, the two ways an accumulator fragment
///        reaches C, and the grid helper of the launchers.
#pragma once

#include <cuda.h>  // CUtensorMap
#include <cuda/ptx>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "common/bounded_wait.cuh"
#include "common/gemm_args.cuh"
#include "common/launch.cuh"
#include "common/perturb.cuh"
#include "common/ring.cuh"
#include "common/sm90_ptx.cuh"

namespace ch16 {

namespace ptx = cuda::ptx;
using bf16 = __nv_bfloat16;

/// C[M x N] = A[M x K] * B[N x K]^T. All three row-major with pitches (elements) lda, ldb,
/// ldc, each a multiple of 8 (16 bytes: TMA's rule for global strides). So A and B are both
/// "K-major": a row of A and a row of B run along K, which is what wgmma reads without a
/// transpose and what cuBLAS calls "TN". A bounded mbarrier wait that gave up records itself
/// in `error` (tut::wait_or_report).
using GemmArgs = tut::GemmArgs<bf16>;

__host__ __device__ constexpr int ceil_div(int a, int b) { return (a + b - 1) / b; }

/// Output tile `tile` of a grid-stride walk: column-major over tiles, so neighbouring blocks
/// share the same B rows (the same N block) and read consecutive A blocks.
struct TileCoord {
  int m0, n0;
};
__device__ __forceinline__ TileCoord tile_coord(int tile, int tiles_m, int bm, int bn) {
  return TileCoord{(tile % tiles_m) * bm, (tile / tiles_m) * bn};
}

// ---------------------------------------------------------------------------------------------
// TMA through cuda::ptx (chapter 12 teaches the tensor-map copies)
// ---------------------------------------------------------------------------------------------
/// TMA: the box at element coordinates (c0 along K, c1 along rows) of `map` into `dst`; the
/// bytes complete a transaction on `bar`. Out-of-bounds elements arrive as zeros.
__device__ __forceinline__ void tma_load_2d(void* dst, const CUtensorMap* map, std::uint64_t* bar,
                                            int c0, int c1) {
  const std::int32_t coords[2] = {c0, c1};
  ptx::cp_async_bulk_tensor(ptx::space_cluster, ptx::space_global, dst, map, coords, bar);
}
/// The same box written to `dst` (and its transaction completed on `bar`) in every block of
/// the cluster named in `mask`: one read from L2, several shared memories filled.
__device__ __forceinline__ void tma_load_2d_multicast(void* dst, const CUtensorMap* map,
                                                      std::uint64_t* bar, int c0, int c1,
                                                      std::uint16_t mask) {
  const std::int32_t coords[2] = {c0, c1};
  ptx::cp_async_bulk_tensor(ptx::space_cluster, ptx::space_global, dst, map, coords, bar, mask);
}
/// TMA store: the box at (c0 along N, c1 along M) of `map` from shared `src`. Out-of-bounds
/// elements are not written (the ragged edge of C needs no mask).
__device__ __forceinline__ void tma_store_2d(const CUtensorMap* map, const void* src, int c0,
                                             int c1) {
  const std::int32_t coords[2] = {c0, c1};
  ptx::cp_async_bulk_tensor(ptx::space_global, ptx::space_shared, map, coords, src);
}

// ---------------------------------------------------------------------------------------------
// One stage of MMAs, and the epilogue through registers
// ---------------------------------------------------------------------------------------------
/// The four K16 slices of one stage: D += A[64 x 64] * B[256 x 64]^T as four wgmma, each
/// reading its slice 32 bytes further into the swizzled rows (descriptor + 2 = + 32 B / 16).
/// @p a points at this warpgroup's 64 rows of A, @p b at the stage's 256 rows of B.
__device__ __forceinline__ void mma_stage(float (&d)[128], const unsigned char* a,
                                          const unsigned char* b, bool accumulate) {
  const std::uint64_t da = tut::smem_desc_sw128(a), db = tut::smem_desc_sw128(b);
#pragma unroll
  for (int k = 0; k < 4; ++k) tut::wgmma_m64n256k16(d, da + 2 * k, db + 2 * k, accumulate || k > 0);
}

// ---------------------------------------------------------------------------------------------
// Three steps of the ring protocol, named: steps 2 and 3 spell them out, steps 4 and 5 call
// these (the lines are the same; what those steps add is around them)
// ---------------------------------------------------------------------------------------------
/// The producer's wait until slot @p slot is empty: its consumers have released it. It waits
/// on the parity of the phase BEFORE the slot's current one (@p phase ^ 1), so on the first
/// lap, when every slot is free, it returns at once. Bounded: false when it gave up (the
/// record of who waited on what is then in @p error).
__device__ __forceinline__ bool wait_slot_empty(std::uint64_t* empty, int slot,
                                                std::uint32_t phase, int kt, unsigned* error) {
  const auto site = tut::WaitSite::producer_warp(0).on(tut::Barrier::kEmpty, slot).at_k_tile(kt);
  return tut::wait_or_report(&empty[slot], phase ^ 1, error, site);
}

/// A consumer warpgroup's wait until the k-tile in the slot at @p pos has landed: full[slot]
/// completes the phase @p pos names once the producer's arrival and all @p stage_bytes of its
/// copies are in. Bounded: false when it gave up. The caller then sets its timed_out flag and
/// waits no more (a timed-out consumer never leaves early: see below).
template <int STAGES>
__device__ __forceinline__ bool wait_slot_full(std::uint64_t* full,
                                               const tut::RingPosition<STAGES>& pos, int warpgroup,
                                               int kt, int stage_bytes, unsigned* error) {
  const auto site = tut::WaitSite::consumer_warpgroup(warpgroup)
                        .on(tut::Barrier::kFull, pos.slot)
                        .at_k_tile(kt)
                        .expecting(stage_bytes);
  return tut::wait_or_report(&full[pos.slot], pos.phase, error, site);
}

/// One k-tile of a consumer warpgroup as one batch of MMAs: wgmma.fence (the accumulators'
/// earlier accesses are ordered before the asynchronous MMAs), mma_stage on the warpgroup's 64
/// rows of A (from row @p row0, 128 swizzled bytes a row) and the stage's B (after its
/// @p a_bytes of A) in slot @p stage, and commit_group: the batch that wgmma.wait_group counts.
__device__ __forceinline__ void mma_k_tile(float (&d)[128], const unsigned char* stage, int row0,
                                           int a_bytes, bool accumulate) {
  tut::wgmma_fence();
  mma_stage(d, stage + row0 * 128, stage + a_bytes, accumulate);
  tut::wgmma_commit_group();
}

/// Two adjacent fp32 results rounded to bf16 and stored as one 4-byte pair (ldc and col are
/// even), masked at the ragged right and bottom edges.
__device__ __forceinline__ void store_pair(const GemmArgs& g, int row, int col, float v0,
                                           float v1) {
  if (row >= g.M || col >= g.N) return;
  bf16* p = g.C + static_cast<std::size_t>(row) * g.ldc + col;
  if (col + 1 < g.N)
    *reinterpret_cast<__nv_bfloat162*>(p) = __floats2bfloat162_rn(v0, v1);
  else
    *p = __float2bfloat16_rn(v0);
}

/// The 64 x 256 accumulator of one warpgroup (wgmma's fragment layout, see
/// tut::wgmma_m64n256k16; N = 128) or its 64 x 128 one (tut::wgmma_m64n128k16; N = 64) stored
/// straight from registers at rows m0.., columns n0.. of C, masked (store_pair) at the ragged
/// edges: the epilogue of steps 2-4 and 7.
template <int N>
__device__ __forceinline__ void store_accumulators(const GemmArgs& g, const float (&d)[N],
                                                   int m0, int n0) {
  const int tid = threadIdx.x % 128;
  const int row = m0 + 16 * (tid / 32) + (tid % 32) / 4;
  const int col = n0 + 2 * (tid % 4);
#pragma unroll
  for (int j = 0; j < N; j += 4) {
    store_pair(g, row, col + 8 * (j / 4), d[j], d[j + 1]);
    store_pair(g, row + 8, col + 8 * (j / 4), d[j + 2], d[j + 3]);
  }
}

/// Shared memory for the ring, moved up to the 1024-byte boundary that 128-byte swizzled
/// tiles need (the launchers add 1024 bytes of slack).
__device__ __forceinline__ unsigned char* align_1024(unsigned char* p) {
  const std::uint32_t off = tut::smem_addr(p) & 1023u;
  return off ? p + (1024 - off) : p;
}

// A timed-out consumer never leaves early. A producer thread whose bounded wait gives up simply returns,
// but a consumer must not. wgmma is warpgroup-collective (.sync.aligned): if one warp left
// while the other three (whose wait may have succeeded a moment later) went on, their next
// wgmma would be an illegal instruction. So after a timeout a consumer stops waiting AND stops
// releasing slots (the producer then times out too, instead of re-arming a barrier whose phase
// is still open), runs its loops to the end on whatever the slots hold, and the record its
// wait_or_report left in the error word fails the check.

/// One block (or cluster) per output tile (pair), capped for the harness's lap check; the
/// table's blocks/SM column is what the occupancy query says fits (@p blocks_per_sm).
inline unsigned tile_grid(int tiles, int blocks_per_sm, unsigned cluster = 1) {
  const unsigned grid = tut::apply_grid_cap(static_cast<unsigned>(tiles), cluster);
  tut::record_grid(grid, blocks_per_sm);
  return grid;
}

}  // namespace ch16
