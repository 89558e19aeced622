/// @file step6_levers.cuh
/// @brief Chapter 16, step 6: step 5's kernel with three levers, each one switch of a small
///        configuration, so that each lever is a row of its own and the last row has them all.
///
/// 1. A smaller staging tile (BOX_STAGING): each consumer warpgroup stages its 64 x 256 result
///    one 64 x 64 box (8 KiB) at a time into two alternating 8 KiB buffers (16 KiB instead of
///    32 KiB). Before it rewrites a buffer, the issuing thread waits only until the store that
///    read that buffer last is done reading (cp.async.bulk.wait_group.read 1: the other
///    buffer's store stays in flight).
/// 2. A fourth ring stage (STAGES = 4): the 32 KiB the smaller staging frees, plus the 18 KiB
///    step 5 leaves unused (209 of 227 KiB), make room for one more 48 KiB slot:
///    4 x 48 + 2 x 16 + 1 (alignment) = 225 KiB <= 227 KiB. One more k-tile in flight covers
///    the producer's latency while the consumers sit in their epilogue.
/// 3. One release per warpgroup and block (WARPGROUP_RELEASE): after wgmma.wait_group, the
///    warpgroup's MMAs (warpgroup-wide operations) are done reading the slot, so one thread
///    per warpgroup and destination block is enough: lane 0 of warp r arrives on empty[s] of
///    block r. empty[s] then counts 2 blocks x 2 warpgroups = 4 arrivals instead of 16.
///
/// Everything else (ring protocol, tile order, producer, main loop, register budget) is
/// step 5's (step5::persistent_gemm). On top of all three, more switches, each a row of its
/// own (step6d-k, at the end of this file): the raster's group height, a prefetch of the
/// tensor maps at kernel start, an L2 cache policy on A's loads, the epilogue under the next
/// tile's MMAs, an exit that waits only for the stores' reads, and an exit without the
/// cluster barrier (the producer drains the ring instead).
#pragma once

#include <cstring>
#include <type_traits>

#include "gemm_common.cuh"
#include "step4_cluster.cuh"
#include "step5_persistent.cuh"

namespace ch16::step6 {

using step4::CLUSTER, step4::STAGE_BYTES;
constexpr int BOX_BYTES = 64 * 64 * 2;  // one 64 x 64 bf16 box of C: 8 KiB
constexpr int SMEM_LIMIT = 227 * 1024;  // the most dynamic shared memory a block may opt into

/// One aligned 4-byte store to shared memory at a 32-bit shared-window address: the staging
/// writes compile to STS [R + immediate] with one address register, where a generic pointer
/// would cost ST.E with a 64-bit address per store.
__device__ __forceinline__ void st_shared_u32(std::uint32_t addr, std::uint32_t v) {
  asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(addr), "r"(v));
}

/// Box @p box (columns 64 box .. 64 box + 63) of a warpgroup's accumulator fragment, as bf16
/// pairs, into the 8 KiB buffer at shared address @p buf (1024-byte aligned), in the C map's
/// 128-byte swizzle: 16-byte chunk c of row r lands at chunk c ^ (r % 8). A thread's rows all
/// have r % 8 = lane / 4, and the buffer is 1024-byte aligned, so the swizzled address is the
/// thread's base address XOR (c << 4): bits 4-6 of the base hold lane / 4. @p pair_bits(j) is
/// the 4-byte bf16 pair of fragment elements j and j + 1 (j even): rounded from the fp32
/// accumulators (stage_box) or already rounded (step 6h's packed registers).
template <int FRAGMENT, class PairBits>
__device__ __forceinline__ void stage_box_pairs(std::uint32_t buf, int box, PairBits pair_bits) {
  static_assert(FRAGMENT == 64 || FRAGMENT == 128, "a 64 x 128 or 64 x 256 wgmma fragment");
  const int tid = threadIdx.x % 128, lane = tid % 32;
  const std::uint32_t base = buf + (16 * (tid / 32) + lane / 4) * 128 + (lane / 4) * 16 + 4 * (tid % 4);
#pragma unroll
  for (int j = 32 * box; j < 32 * box + 32; j += 2) {
    const int chunk = (j / 4) % 8, lower_half = (j / 2) % 2;  // rows r and r + 8
    st_shared_u32((base ^ (chunk << 4)) + lower_half * 8 * 128, pair_bits(j));
  }
}

/// Two fp32 accumulators rounded to a bf16 pair, as the 4 bytes one shared store writes.
__device__ __forceinline__ std::uint32_t bf16_pair_bits(float lo, float hi) {
  const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  std::uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return bits;
}

/// Box @p box of the fp32 fragment @p d, rounded as it is staged (stage_box_pairs). A 64 x 128
/// fragment (m64n128, 64 registers) is the first half of the 64 x 256 one, so the same
/// function stages its boxes 0 and 1.
template <int FRAGMENT>
__device__ __forceinline__ void stage_box(std::uint32_t buf, const float (&d)[FRAGMENT], int box) {
  stage_box_pairs<FRAGMENT>(buf, box, [&](int j) { return bf16_pair_bits(d[j], d[j + 1]); });
}

/// One box of the epilogue by boxes: box b goes through buffer b % 2. 1. the store that last
/// read this buffer (box b - 2, or the previous tile's) is done reading it - the other one,
/// the most recent bulk group, may still be reading; 2. everyone knows; 3. write the box
/// (@p stage(buffer address)); 4. make the writes visible to the async proxy; 5. everyone has;
/// 6. one thread stores the box and commits it as a bulk group of its own (so "all but the
/// most recent" is one box).
template <class Stage>
__device__ __forceinline__ void store_box(unsigned char* staging, const CUtensorMap& map_c,
                                          TileCoord tc, int warpgroup, int box, Stage stage) {
  const bool stores = threadIdx.x % 128 == 0;  // the thread that issues this warpgroup's TMA stores
  const int buffer = box % 2;
  if (stores) ptx::cp_async_bulk_wait_group_read(ptx::n32_t<1>{});  // this buffer's last store has read it
  tut::named_barrier_sync(warpgroup, 128);
  stage(tut::smem_addr(staging) + buffer * BOX_BYTES);
  ptx::fence_proxy_async(ptx::space_shared);  // my box writes, before the TMA store reads them
  tut::named_barrier_sync(warpgroup, 128);
  if (stores) {
    tma_store_2d(&map_c, staging + buffer * BOX_BYTES, tc.n0 + 64 * box, tc.m0 + (warpgroup - 1) * 64);
    ptx::cp_async_bulk_commit_group();
  }
}

/// The epilogue by boxes (step 6a): the four boxes of the tile, one after another.
__device__ __forceinline__ void store_tile_by_boxes(unsigned char* staging, const float (&d)[128],
                                                    const CUtensorMap& map_c, TileCoord tc,
                                                    int warpgroup) {
#pragma unroll
  for (int box = 0; box < 4; ++box)
    store_box(staging, map_c, tc, warpgroup, box,
              [&](std::uint32_t buf) { stage_box(buf, d, box); });
}

/// Step 6h's epilogue: the tile's accumulators are rounded into 64 registers of bf16 pairs
/// right after its main loop (the fp32 registers are then free for the next tile's MMAs), and
/// box b of it is staged and stored while the MMAs of the NEXT tile's k-tile b are in flight:
/// the four boxes leave under the first four k-tiles instead of between two main loops, when
/// the tensor cores would wait. What the next tile's first k-tiles did not cover (K shorter
/// than 4 k-tiles) is stored after that main loop, and a block's last tile, with no main loop
/// after it, is stored straight from its accumulators as in step 6a.
/// Costs 64 registers during those k-tiles: 128 accumulators + 64 pairs + addressing, within
/// the consumers' 232.
struct OverlappedEpilogue {
  std::uint32_t pairs[64];  // the pending tile, bf16 pairs in fragment order
  TileCoord pending{};
  bool has_pending = false;
  int next_box = 0;  // the pending tile's first box not yet stored

  __device__ void store_pending(int box, unsigned char* staging, const CUtensorMap& map_c,
                                int warpgroup) {
    store_box(staging, map_c, pending, warpgroup, box, [&](std::uint32_t buf) {
      stage_box_pairs<128>(buf, box, [&](int j) { return pairs[j / 2]; });
    });
  }
  /// The pending boxes from next_box on (box indices unrolled: pairs[] stays in registers).
  __device__ void store_rest(unsigned char* staging, const CUtensorMap& map_c, int warpgroup) {
#pragma unroll
    for (int box = 0; box < 4; ++box)
      if (has_pending && box >= next_box) store_pending(box, staging, map_c, warpgroup);
    has_pending = false;
  }
  __device__ void under_mmas(int kt, unsigned char* staging, const CUtensorMap& map_c,
                             int warpgroup) {
#pragma unroll
    for (int box = 0; box < 4; ++box)
      if (has_pending && kt == box) {
        store_pending(box, staging, map_c, warpgroup);
        next_box = box + 1;
      }
  }
  __device__ void after_tile(unsigned char* staging, const float (&d)[128],
                             const CUtensorMap& map_c, TileCoord tc, int warpgroup, bool last) {
    store_rest(staging, map_c, warpgroup);  // a K of fewer than 4 k-tiles left some behind
    if (last) {  // no next main loop to hide this tile's stores under: store it as step 6a does
      store_tile_by_boxes(staging, d, map_c, tc, warpgroup);
      return;
    }
#pragma unroll
    for (int j = 0; j < 128; j += 2) pairs[j / 2] = bf16_pair_bits(d[j], d[j + 1]);
    pending = tc;
    has_pending = true;
    next_box = 0;
  }
};

/// Step 5's configuration with the three switches (the file comment says what each does),
/// and the three that the rows on top of step 6 vary: the raster's group height (GROUP_M
/// pair-rows), the tensor-map prefetch at kernel start (PREFETCH_MAPS) and an L2 evict_last
/// policy on A's loads (A_EVICT_LAST).
template <int kStages, bool kBoxStaging, bool kWarpgroupRelease, int kGroupM = step5::GROUP_M,
          bool kPrefetchMaps = false, bool kAEvictLast = false, bool kOverlapEpilogue = false,
          bool kExitWaitsReadOnly = false, bool kExitOnDrain = false,
          bool kProgrammaticLaunch = false>
struct Levers : step5::Config {
  static constexpr int STAGES = kStages;
  static constexpr bool BOX_STAGING = kBoxStaging, WARPGROUP_RELEASE = kWarpgroupRelease;
  static constexpr int GROUP_M = kGroupM;
  static constexpr bool PREFETCH_MAPS = kPrefetchMaps;
  static constexpr bool A_EVICT_LAST = kAEvictLast;
  static constexpr bool EXIT_WAITS_READ_ONLY = kExitWaitsReadOnly;
  static constexpr bool EXIT_ON_DRAIN = kExitOnDrain;
  static constexpr bool PROGRAMMATIC_LAUNCH = kProgrammaticLaunch;
  static_assert(GROUP_M >= 1, "a group holds at least one pair-row");
  static constexpr int STAGING_BYTES = (BOX_STAGING ? 2 : 4) * BOX_BYTES;  // per consumer warpgroup
  static constexpr int SMEM_BYTES = STAGES * STAGE_BYTES + 2 * STAGING_BYTES + 1024;
  static_assert(SMEM_BYTES <= SMEM_LIMIT, "ring + staging + alignment slack must fit in 227 KiB");
  // Two consumer warpgroups in each of the two blocks, or every consumer warp of both.
  static constexpr int EMPTY_ARRIVALS =
      WARPGROUP_RELEASE ? CLUSTER * 2 : step5::Config::EMPTY_ARRIVALS;

  __device__ static void release(std::uint64_t* empty, int slot) {
    if constexpr (WARPGROUP_RELEASE) {
      // Lane 0 of warp r of this warpgroup arrives on empty[slot] of block r. Its
      // wgmma.wait_group covers the whole warpgroup's MMAs (they are warpgroup operations).
      const int warp_in_group = (threadIdx.x % 128) / 32;
      if (threadIdx.x % 32 == 0 && warp_in_group < CLUSTER)
        tut::mbarrier_arrive_remote(&empty[slot], static_cast<unsigned>(warp_in_group));
    } else {
      step5::Config::release(empty, slot);
    }
  }
  /// Step 5's epilogue, or the same by boxes (step 6a: after each tile's main loop).
  struct BoxEpilogue : step5::Config::Epilogue {
    __device__ void after_tile(unsigned char* staging, const float (&d)[128],
                               const CUtensorMap& map_c, TileCoord tc, int warpgroup,
                               bool /*last*/) {
      store_tile_by_boxes(staging, d, map_c, tc, warpgroup);
    }
  };
  static_assert(!kOverlapEpilogue || BOX_STAGING, "step 6h's epilogue stores by boxes");
  using Epilogue = std::conditional_t<
      kOverlapEpilogue, OverlappedEpilogue,
      std::conditional_t<BOX_STAGING, BoxEpilogue, step5::Config::Epilogue>>;
};

// The rows: each lever alone against step 5, then all three (the step-6 row).
struct SmallStaging : Levers<3, true, false> {};      // step6a: 16 KiB staging, 3 stages
struct FourStages : Levers<4, true, false> {};        // step6b: 16 KiB staging, 4 stages
struct WarpgroupRelease : Levers<3, false, true> {};  // step6c: step 5 + 4 arrivals per slot
struct AllLevers : Levers<4, true, true> {};          // step6: all three

// The rows on top of step 6, each one switch away from AllLevers.
// step6d: the three tensor maps prefetched while the barriers are initialised (step5's
// persistent_gemm says where and by whom).
struct PrefetchMaps : Levers<4, true, true, step5::GROUP_M, true> {};
// step6e / step6f: the raster's groups 4 or 16 pair-rows high instead of 8. At 4096^3 there
// are 16 x 16 tile pairs; a wave of resident clusters covers consecutive pairs of the walk, so
// the group height decides how many A rows and B columns one wave reads (tall groups: many A
// rows, few B columns; short ones the reverse). Below one wave (2048^3: 64 pairs) the order
// changes nothing but which cluster gets which pair.
struct GroupOf4 : Levers<4, true, true, 4> {};
struct GroupOf16 : Levers<4, true, true, 16> {};
// step6g: A's loads carry an L2 evict_last policy (B's stay as they are). In the grouped
// walk a group's A rows (GROUP_M pair-rows x K: 16 MiB at 4096^3) are re-read by every tile
// column of the group, one column after another, while a B column is re-read by the group's
// pair-rows at about the same time (within a wave). Whether asking L2 to keep A's lines
// helps is what the row measures (a hypothesis until then).
struct EvictLastA : Levers<4, true, true, step5::GROUP_M, false, true> {};
// step6h: the epilogue under the next tile's MMAs (OverlappedEpilogue above): between two
// main loops only the rounding into 64 registers is left; the staging, the fences, the
// barriers and the TMA stores run while the tensor cores work on the next tile.
struct OverlapEpilogue : Levers<4, true, true, step5::GROUP_M, false, false, true> {};
// step6i: 6h, and before the block exits its storing threads wait only until the last TMA
// stores have READ the staging buffers (cp.async.bulk.wait_group.read 0), not until their
// writes to C are performed (cp.async.bulk.wait_group 0, every row before). Shared memory must
// outlive the reads; nothing in the kernel reads C, and the writes are complete when the grid
// is (what CUTLASS's TMA-store epilogues rely on too, cute::tma_store_wait being the .read
// form). At 2048^3 every block stores one tile and then exits, so the wait is on its path.
struct ExitWaitsReadOnly : Levers<4, true, true, step5::GROUP_M, false, false, true, true> {};
// step6j: 6i with 6d's tensor-map prefetch: the rows' winners of the prologue and the tail
// together, the configuration a size dispatch would pick if both hold their gains.
struct ExitReadAndPrefetch : Levers<4, true, true, step5::GROUP_M, true, false, true, true> {};
// step6k: 6i without the cluster barrier at exit. What a block must outlive is its peer's use
// of its shared memory: the peer's multicast copies into my ring (landed before my consumers'
// full waits passed) and its consumers' releases onto my empty barriers. So my producer, after
// its last load, waits until every slot's last use is released (the ring drained), and
// nothing else waits at exit: a block whose epilogue is done leaves without waiting for its
// peer's epilogue.
struct ExitOnDrain : Levers<4, true, true, step5::GROUP_M, false, false, true, true, true> {};
// step6l: 6k launched with programmatic dependent launch (tut::launch_programmatic): every
// block triggers the next kernel of the stream as it starts and waits for the previous one
// after its barrier init, so the gap between two GEMMs in a stream (the next grid's launch and
// the placement of its blocks) overlaps this grid's last tiles.
struct ProgrammaticLaunch
    : Levers<4, true, true, step5::GROUP_M, false, false, true, true, true, true> {};

template <class L>
__global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(step4::THREADS, 1)
    gemm_step6_kernel(const __grid_constant__ CUtensorMap map_a,
                      const __grid_constant__ CUtensorMap map_b_half,
                      const __grid_constant__ CUtensorMap map_c, GemmArgs g) {
  step5::persistent_gemm<L>(map_a, map_b_half, map_c, g);
}

/// Persistent, as step 5: as many clusters as fit, never more than the tile pairs.
template <class L>
void launch(const CUtensorMap& a128, const CUtensorMap& b128, const CUtensorMap& c64,
            const GemmArgs& g, int sm_count, cudaStream_t s) {
  step5::launch_kernel(gemm_step6_kernel<L>, a128, b128, c64, g, sm_count, s, L::SMEM_BYTES,
                       L::PROGRAMMATIC_LAUNCH);
}

}  // namespace ch16::step6
