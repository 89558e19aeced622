/// @file step8_stream_k.cuh
/// @brief Chapter 16, step 8: step 6i whose last, partial wave of tile pairs is split by
///        k-tiles over every cluster (stream-K), so that no cluster sits idle while the others
///        finish the last tiles.
///
/// A persistent grid of Q clusters walking P tile pairs round-robin makes ceil(P / Q) rounds;
/// when P is not a multiple of Q, the last round has only P mod Q pairs and the other clusters
/// idle through a whole tile's main loop. At 4096^3 on 132 SMs: 256 pairs, 66 clusters, 3
/// full rounds and a fourth of 58 pairs; each cluster's time is 4 x 64 k-tiles while the work
/// is 256 x 64 / 66 = 248.2 k-tiles per cluster.
///
/// Step 8 keeps the full rounds (the data-parallel part: whole pairs, exactly as step 6i) and
/// lays the remaining pairs' k-tiles end to end, tail pair by tail pair, then hands every
/// cluster the same number of consecutive k-tiles of that line (`span`, at least
/// kMinTailSpan and a quarter of a tile's K, so that no tile is cut into many small pieces).
/// A cluster's stretch of the line may start inside one pair and end inside the next, so it
/// runs one or two work units:
///
///   whole  k-tiles [0, K) of a pair: step 6i's tile (main loop, epilogue);
///   owner  k-tiles [0, k) of a pair, k < K: the main loop, then the partial sums of every
///          cluster that holds a later part of this pair are added to the accumulators, then
///          the epilogue. The owner's part is the LAST unit of its cluster (its stretch ends
///          inside the pair), so by then the others, whose parts are the FIRST units of their
///          stretches, are usually done;
///   partial k-tiles [k, k') of a pair, k > 0: the main loop, then the fp32 accumulators go
///          to this cluster's slot of a workspace in global memory, and a flag says so. Only
///          the first unit of a cluster's stretch can be a partial (every later one starts a
///          pair), so each cluster needs one slot.
///
/// Nobody waits on a unit that itself waits: partials wait for nothing, so the owners' waits
/// end (every cluster of the persistent grid is resident). The sum of an owner's and its
/// partials' fp32 sums of exact bf16 products is an fp32 summation in another order: main.cu's
/// error bound covers it unchanged.
///
/// The hand-off through global memory, per consumer warpgroup (each has its own slot, flag and
/// 64 x 256 fp32 partial, 64 KiB):
///   partial: every thread stores its 128 accumulators (st.global.cg: to L2, which the other
///            SM reads; a thread's element i at word i * 128 + thread, so a warp's 32 stores
///            are one 128-byte line); the warpgroup's named barrier (every thread's stores
///            before what follows); one thread stores the launch's epoch into the flag with
///            release semantics at GPU scope (the stores it has seen through the barrier are
///            visible to whoever acquires the flag).
///   owner:   one thread spins on the flag with acquire semantics at GPU scope, bounded (a flag
///            that never arrives names itself: partial[j]); the named barrier (the acquire
///            before everyone's loads); every thread adds the partial (ld.global.cg) to its
///            accumulators.
/// The flag holds an epoch that the host raises at every launch, so no launch resets a flag and
/// a flag left by an earlier launch, even one that timed out, never matches.
#pragma once

#include <cuda/atomic>

#include <algorithm>

#include "common/bounded_wait.cuh"
#include "common/device_buffer.cuh"
#include "common/ring.cuh"
#include "gemm_common.cuh"
#include "step5_persistent.cuh"
#include "step6_levers.cuh"

namespace ch16::step8 {

using step4::CLUSTER, step4::STAGE_BYTES, step4::THREADS, step5::BK, step5::BM, step5::BN;
using Base = step6::ExitWaitsReadOnly;  // step 6i: the configuration the full rounds run
constexpr int kMinTailSpan = 4;         // fewest k-tiles of the tail a cluster takes
constexpr int kPartialFloats = 64 * BN;  // one consumer warpgroup's fp32 partial: 64 KiB

__host__ __device__ constexpr int imin(int a, int b) { return a < b ? a : b; }
__host__ __device__ constexpr int imax(int a, int b) { return a > b ? a : b; }

/// How a problem of @p pairs tile pairs of @p ktiles k-tiles is split over @p clusters
/// clusters: host and device compute it alike (the host tests check it covers every k-tile of
/// every pair exactly once).
struct Schedule {
  int ktiles;    ///< k-tiles per pair
  int clusters;  ///< clusters of the grid
  int dp_pairs;  ///< pairs computed whole in the full rounds (a multiple of clusters)
  int tail;      ///< k-tiles of the pairs after them, laid end to end
  int span;      ///< consecutive tail k-tiles per cluster; 0 when there is no tail

  __host__ __device__ static Schedule make(int pairs, int ktiles, int clusters) {
    Schedule s{ktiles, clusters, pairs / clusters * clusters, 0, 0};
    s.tail = (pairs - s.dp_pairs) * ktiles;
    if (s.tail > 0) {
      const int least = imin(ktiles, imax(kMinTailSpan, ceil_div(ktiles, 4)));
      s.span = imax(ceil_div(s.tail, clusters), least);
    }
    return s;
  }
  /// The clusters holding the later parts of tail pair @p tail_pair, whose owner's part ends
  /// at k-tile @p owner_end: [first, last]. first > last: nobody (the owner has all of it).
  __host__ __device__ void contributors(int tail_pair, int owner_end, int& first, int& last) const {
    first = (tail_pair * ktiles + owner_end) / span;
    last = (tail_pair * ktiles + ktiles - 1) / span;
    if (owner_end >= ktiles) last = first - 1;
  }
};

/// One work unit: k-tiles [k_begin, k_end) of tile pair `pair` (its index in the grouped walk).
struct Unit {
  int pair, k_begin, k_end;
};

/// A cluster's work units in order: its full rounds' pairs, then its stretch of the tail.
/// Producer and consumers walk the same sequence, so the ring stays in step.
struct Units {
  Schedule s;
  int cluster;
  int round = 0;
  int it = 0, end = 0;  // this cluster's stretch of the tail: [it, end)

  __host__ __device__ Units(const Schedule& schedule, int cluster_id) : s(schedule), cluster(cluster_id) {
    if (s.span > 0) {
      it = imin(cluster * s.span, s.tail);
      end = imin(it + s.span, s.tail);
    }
  }
  __host__ __device__ bool next(Unit& u) {
    const int pair = cluster + round * s.clusters;
    if (pair < s.dp_pairs) {
      ++round;
      u = Unit{pair, 0, s.ktiles};
      return true;
    }
    if (it >= end) return false;
    const int tail_pair = it / s.ktiles, k_begin = it % s.ktiles;
    const int k_end = imin(s.ktiles, k_begin + (end - it));
    u = Unit{s.dp_pairs + tail_pair, k_begin, k_end};
    it += k_end - k_begin;
    return true;
  }
};

/// What the kernel needs besides step 6i's arguments: the partial slots (one per cluster,
/// block rank and consumer warpgroup), their flags, and this launch's epoch.
struct TailArgs {
  float* partials;
  unsigned* flags;
  unsigned epoch;
};

/// The slot of cluster @p cluster, block rank @p rank, consumer warpgroup @p warpgroup (1 or 2).
__device__ __forceinline__ int slot_of(int cluster, unsigned rank, int warpgroup) {
  return (cluster * CLUSTER + static_cast<int>(rank)) * 2 + (warpgroup - 1);
}

/// A partial unit's end: the accumulators to the slot, then the flag (file comment).
__device__ __forceinline__ void publish_partial(const float (&d)[128], const TailArgs& t, int slot,
                                                int warpgroup) {
  const int tid = threadIdx.x % 128;
  float* out = t.partials + static_cast<std::size_t>(slot) * kPartialFloats;
#pragma unroll
  for (int i = 0; i < 128; ++i) __stcg(out + i * 128 + tid, d[i]);
  tut::named_barrier_sync(warpgroup, 128);  // all 128 threads' stores, before the flag
  tut::perturb(tut::Perturb::kBeforeRelease, slot);
  if (tid == 0)
    cuda::atomic_ref<unsigned, cuda::thread_scope_device>(t.flags[slot]).store(
        t.epoch, cuda::memory_order_release);
}

/// An owner's wait for one flag: acquire at GPU scope, for at most tut::kWaitBudgetNs.
__device__ __forceinline__ bool wait_partial_flag(unsigned* flag, unsigned epoch) {
  cuda::atomic_ref<unsigned, cuda::thread_scope_device> f(*flag);
  const unsigned long long start = tut::globaltimer_ns();
  while (f.load(cuda::memory_order_acquire) != epoch)
    if (tut::globaltimer_ns() - start > tut::kWaitBudgetNs) return false;
  return true;
}

/// An owner's additions: for each contributing cluster, one thread waits for its flag, the
/// warpgroup's barrier passes the acquire on, everyone adds that partial. After a timeout
/// nothing more is waited for (the record fails the check) but the barriers are still met.
__device__ __forceinline__ void add_partials(float (&d)[128], const TailArgs& t, int first, int last,
                                             unsigned rank, int warpgroup, int pair, bool& timed_out,
                                             unsigned* error) {
  const int tid = threadIdx.x % 128;
  for (int c = first; c <= last; ++c) {
    const int slot = slot_of(c, rank, warpgroup);
    if (tid == 0 && !timed_out && !wait_partial_flag(&t.flags[slot], t.epoch)) {
      tut::record_timeout(error, tut::WaitSite::consumer_warpgroup(warpgroup)
                                     .on(tut::Barrier::kPartial, static_cast<unsigned>(c))
                                     .at_tile(static_cast<unsigned>(pair)), 1);
      timed_out = true;
    }
    tut::named_barrier_sync(warpgroup, 128);  // the flag's acquire, before every thread's loads
    const float* in = t.partials + static_cast<std::size_t>(slot) * kPartialFloats;
#pragma unroll
    for (int i = 0; i < 128; ++i) d[i] += __ldcg(in + i * 128 + tid);
  }
}

/// The producer: step 5's, over this cluster's work units (k-tiles [k_begin, k_end) of each).
__device__ __forceinline__ void produce(unsigned char* ring, std::uint64_t* full, std::uint64_t* empty,
                                        const CUtensorMap& map_a, const CUtensorMap& map_b_half,
                                        const GemmArgs& g, const Schedule& sched) {
  tut::setmaxnreg_dec<step5::PRODUCER_REGS>();
  if (threadIdx.x >= 32 || !tut::elect_one_lane()) return;
  const unsigned rank = ptx::get_sreg_cluster_ctarank();
  const int pairs_m = ceil_div(ceil_div(g.M, BM), CLUSTER), tiles_n = ceil_div(g.N, BN);
  Units units(sched, static_cast<int>(blockIdx.x / CLUSTER));
  tut::RingPosition<Base::STAGES> pos;
  Unit u;
  bool ok = true;
  while (ok && units.next(u)) {
    const TileCoord tc = step5::grouped_pair_tile<Base::GROUP_M>(u.pair, pairs_m, tiles_n, rank);
    for (int kt = u.k_begin; kt < u.k_end; ++kt, pos.advance()) {
      ok = wait_slot_empty(empty, pos.slot, pos.phase, kt, g.error);
      if (!ok) break;
      tut::perturb(tut::Perturb::kBeforeTmaIssue, kt);
      unsigned char* a = ring + pos.slot * STAGE_BYTES;
      ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &full[pos.slot], STAGE_BYTES);
      tma_load_2d(a, &map_a, &full[pos.slot], kt * BK, tc.m0);
      tma_load_2d_multicast(a + step4::A_BYTES + rank * step4::B_HALF_BYTES, &map_b_half,
                            &full[pos.slot], kt * BK, tc.n0 + static_cast<int>(rank) * (BN / CLUSTER), 0b11);
    }
  }
}

/// Step 8b's epilogue for a block's last tile: once both consumer warpgroups are past their
/// main loops, no MMA reads the ring and no copy writes it (every copy of the block's last unit
/// has landed: its full[] waits completed, the peer's multicast halves included), so the ring's
/// 192 KiB are free. Each warpgroup stages its whole 64 x 256 result there at once, in four
/// swizzled boxes (32 KiB), with one proxy fence, one barrier and four TMA stores, instead of
/// the box-by-box hand-over through two 8 KiB buffers that 6i's last tile makes.
__device__ __forceinline__ void store_last_tile_in_ring(unsigned char* ring, const float (&d)[128],
                                                        const CUtensorMap& map_c, TileCoord tc,
                                                        int warpgroup) {
  tut::named_barrier_sync(3, 256);  // both warpgroups' last wgmma.wait_group are behind us
  const std::uint32_t tile = tut::smem_addr(ring) + (warpgroup - 1) * 4 * step6::BOX_BYTES;
#pragma unroll
  for (int box = 0; box < 4; ++box) step6::stage_box(tile + box * step6::BOX_BYTES, d, box);
  ptx::fence_proxy_async(ptx::space_shared);  // my staging writes, before the TMA stores read them
  tut::named_barrier_sync(warpgroup, 128);
  if (threadIdx.x % 128 == 0) {
    for (int box = 0; box < 4; ++box)
      tma_store_2d(&map_c, ring + (warpgroup - 1) * 4 * step6::BOX_BYTES + box * step6::BOX_BYTES,
                   tc.n0 + 64 * box, tc.m0 + (warpgroup - 1) * 64);
    ptx::cp_async_bulk_commit_group();
  }
}

/// @tparam kLastTileInRing step 8b: a block's last tile leaves through the ring
///         (store_last_tile_in_ring); step 8: through 6i's staging buffers, box by box.
template <bool kLastTileInRing>
__global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(THREADS, 1)
    gemm_step8_stream_k_kernel(const __grid_constant__ CUtensorMap map_a,
                               const __grid_constant__ CUtensorMap map_b_half,
                               const __grid_constant__ CUtensorMap map_c, GemmArgs g, TailArgs t) {
  extern __shared__ unsigned char smem_raw[];
  unsigned char* ring = align_1024(smem_raw);
  __shared__ std::uint64_t full[Base::STAGES], empty[Base::STAGES];
  step5::init_ring_barriers<Base::STAGES>(full, empty, Base::EMPTY_ARRIVALS);
  const int pairs_m = ceil_div(ceil_div(g.M, BM), CLUSTER), tiles_n = ceil_div(g.N, BN);
  const int ktiles = ceil_div(g.K, BK), cluster_id = static_cast<int>(blockIdx.x / CLUSTER);
  const Schedule sched = Schedule::make(pairs_m * tiles_n, ktiles, static_cast<int>(gridDim.x / CLUSTER));
  const int warpgroup = threadIdx.x / 128;
  if (warpgroup == 0) {  // ---- producer ----
    produce(ring, full, empty, map_a, map_b_half, g, sched);
  } else {  // ---- consumers ----
    tut::setmaxnreg_inc<step5::CONSUMER_REGS>();
    const unsigned rank = ptx::get_sreg_cluster_ctarank();
    const auto release = [&](int slot) { Base::release(empty, slot); };
    bool timed_out = false;  // a timed-out consumer never leaves early (gemm_common.cuh)
    unsigned char* staging = ring + Base::STAGES * STAGE_BYTES + (warpgroup - 1) * Base::STAGING_BYTES;
    tut::RingPosition<Base::STAGES> pos;
    float d[128];
    step6::OverlappedEpilogue epilogue;
    const auto under_mmas = [&](int i) { epilogue.under_mmas(i, staging, map_c, warpgroup); };
    Units units(sched, cluster_id);
    Unit u, next;
    bool more = units.next(next);
    while (more) {
      u = next;
      more = units.next(next);  // is there a unit after this one?
      const TileCoord tc = step5::grouped_pair_tile<Base::GROUP_M>(u.pair, pairs_m, tiles_n, rank);
      step5::consume_k_range(d, ring, full, pos, u.k_begin, u.k_end, warpgroup, timed_out, g.error,
                             release, under_mmas);
      if (u.k_begin > 0) {  // a partial: its sums go to the owner, not to C
        publish_partial(d, t, slot_of(cluster_id, rank, warpgroup), warpgroup);
        epilogue.store_rest(staging, map_c, warpgroup);  // the previous tile's boxes still pending
        continue;
      }
      if (u.k_end < ktiles) {  // an owner: add the later parts, then store as a whole tile
        int first, last;
        sched.contributors(u.pair - sched.dp_pairs, u.k_end, first, last);
        add_partials(d, t, first, last, rank, warpgroup, u.pair, timed_out, g.error);
      }
      if (kLastTileInRing && !more) {
        epilogue.store_rest(staging, map_c, warpgroup);  // the previous tile's boxes still pending
        store_last_tile_in_ring(ring, d, map_c, tc, warpgroup);
      } else {
        epilogue.after_tile(staging, d, map_c, tc, warpgroup, !more);
      }
    }
    epilogue.store_rest(staging, map_c, warpgroup);  // a block whose last unit was a partial
    // As step 6i: shared memory must outlive the last TMA stores' reads of it, nothing more.
    if (threadIdx.x % 128 == 0) ptx::cp_async_bulk_wait_group_read(ptx::n32_t<0>{});
  }
  // Neither block may exit while its peer can still multicast into it or arrive on it.
  ptx::barrier_cluster_arrive(ptx::sem_release);
  ptx::barrier_cluster_wait(ptx::sem_acquire);
}

/// The partial slots and flags of a problem, allocated at its first step-8 launch for the grid
/// it uses (outside any timed launch: the first launch is the checked one), flags zeroed once.
/// Each launch takes the next epoch (never 0, the value of a flag no launch has written).
struct Workspace {
  tut::DeviceBuffer<float> partials;
  tut::DeviceBuffer<unsigned> flags;
  unsigned epoch = 0;

  TailArgs for_launch(int clusters, cudaStream_t s) {
    const std::size_t slots = static_cast<std::size_t>(clusters) * CLUSTER * 2;
    if (flags.size() < slots) {
      partials = tut::DeviceBuffer<float>(slots * kPartialFloats);
      flags = tut::DeviceBuffer<unsigned>(slots);
      CUDA_CHECK(cudaMemsetAsync(flags.data(), 0, flags.bytes(), s));
    }
    if (++epoch == 0) ++epoch;
    return TailArgs{partials.data(), flags.data(), epoch};
  }
};

/// Every resident cluster (the tail wants them all, even when there are fewer pairs than
/// clusters), never more than there are k-tiles to share.
template <bool kLastTileInRing>
void launch(const CUtensorMap& a128, const CUtensorMap& b128, const CUtensorMap& c64,
            const GemmArgs& g, int sm_count, Workspace& ws, cudaStream_t s) {
  const auto kernel = gemm_step8_stream_k_kernel<kLastTileInRing>;
  const int pairs = ceil_div(ceil_div(g.M, BM), CLUSTER) * ceil_div(g.N, BN);
  const int work = pairs * ceil_div(g.K, BK);
  const int resident = std::max(1, std::min(tut::max_active_clusters(kernel, CLUSTER,
                                                                     THREADS, Base::SMEM_BYTES),
                                            sm_count / CLUSTER));
  const unsigned grid = tile_grid(std::min(resident, std::max(1, work)) * CLUSTER, 1, CLUSTER);
  const TailArgs t = ws.for_launch(static_cast<int>(grid) / CLUSTER, s);
  kernel<<<grid, THREADS, Base::SMEM_BYTES, s>>>(a128, b128, c64, g, t);
}

}  // namespace ch16::step8
