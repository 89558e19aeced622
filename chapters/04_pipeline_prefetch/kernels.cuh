// Chapter 04: multi-stage prefetch with cuda::pipeline (thread scope)
//
// What it adds over chapter 03: more than one or two tiles in flight per block. A ring of
// STAGES tile buffers in shared memory; while the block works on tile k, tiles k+1 .. k+STAGES-1
// are already being copied. The copies are cp.async (LDGSTS) issued per thread through a
// thread-scope cuda::pipeline:
//   producer_acquire()  memcpy_async(..., pipe)  producer_commit()     (cp.async.commit_group)
//   pipeline_consumer_wait_prior<STAGES-1>(pipe)  ...use...  consumer_release()
//                                                                     (cp.async.wait_group N)
// STAGES is a template parameter (1, 2, 3, 4, 6, 8, 12, 16 instantiated). The work per element
// is an option (--rounds: integer multiply-adds per 32-bit word), the arithmetic-intensity knob
// that decides whether there is any compute for the copies to hide behind.
//
// Why it matters: bytes in flight per SM = blocks/SM x STAGES x 4 KiB. Chapter 01's synchronous
// kernel at one block per SM has at most one 4 KiB tile in flight; DRAM latency x bandwidth per
// SM needs several times that. Deep pipelines get it from ONE block; occupancy gets it from many.
// The sweep after the table measures both axes (stages x blocks per SM, stages x rounds) and
// writes <--json>.sweep.json for plot_sweep.py.
//
// Minimum compute capability: 8.0 (cp.async). Dynamic shared memory: STAGES x 4 KiB per block.
// Run:    build/bin/ch04_pipeline_prefetch [--blocks-per-sm=N] [--rounds=R] [--size=1G] [--json=F]
// Output: the harness table, then the two sweeps (tables on stdout, JSON beside --json).
#pragma once
#define CH04_KERNELS_INCLUDED  // sweep.cuh checks it (it must not include kernels.cuh itself)

#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>
#include <cuda/pipeline>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/device_buffer.cuh"
#include "common/harness.cuh"

namespace ch04 {

namespace cg = cooperative_groups;

// ---------------------------------------------------------------------------------------------
// Constants
// ---------------------------------------------------------------------------------------------
constexpr int THREADS = 256;                       // threads per block, every kernel here
constexpr int TILE_VECS = THREADS;                 // one uint4 (16 B) per thread per tile
constexpr int TILE_BYTES = TILE_VECS * 16;         // 4 KiB

// Elements in the tile that starts at `base`: TILE_VECS, or fewer for the last tile.
__host__ __device__ inline int tile_count(std::size_t n_vecs, std::size_t base) {
  const std::size_t left = n_vecs - base;
  return static_cast<int>(left < TILE_VECS ? left : TILE_VECS);
}

// The compute step: `rounds` dependent integer multiply-adds per 32-bit word (one IMAD each; a
// bijection, so unique inputs stay unique, and exact, so the CPU reference matches bit for bit).
__host__ __device__ inline std::uint32_t work_word(std::uint32_t x, int rounds) {
  for (int r = 0; r < rounds; ++r) x = x * 1664525u + 1013904223u;
  return x;
}
__device__ inline uint4 work_vec(uint4 v, int rounds) {
  return make_uint4(work_word(v.x, rounds), work_word(v.y, rounds), work_word(v.z, rounds),
                    work_word(v.w, rounds));
}

// ---------------------------------------------------------------------------------------------
// v0: chapter 03's best pipeline: collective copies into two buffers, cg::wait_prior<1>
// ---------------------------------------------------------------------------------------------
__global__ void stream_v0_cg_double_kernel(const uint4* __restrict__ d_in, uint4* __restrict__ d_out,
                                           std::size_t n_vecs) {
  __shared__ alignas(16) uint4 s_tile[2][TILE_VECS];  // [2][256] uint4 = 8 KiB
  const cg::thread_block block = cg::this_thread_block();
  const int t = threadIdx.x;
  const std::size_t num_tiles = (n_vecs + TILE_VECS - 1) / TILE_VECS;
  std::size_t tile = blockIdx.x;
  if (tile < num_tiles) {
    const std::size_t base = tile * TILE_VECS;
    cg::memcpy_async(block, s_tile[0], d_in + base, sizeof(uint4) * tile_count(n_vecs, base));
  }
  for (int k = 0; tile < num_tiles; tile += gridDim.x, ++k) {
    const std::size_t next = tile + gridDim.x;
    if (next < num_tiles) {
      const std::size_t next_base = next * TILE_VECS;
      cg::memcpy_async(block, s_tile[(k + 1) & 1], d_in + next_base,
                       sizeof(uint4) * tile_count(n_vecs, next_base));
      cg::wait_prior<1>(block);
    } else {
      cg::wait(block);
    }
    const std::size_t base = tile * TILE_VECS;
    const int count = tile_count(n_vecs, base);
    if (t < count) d_out[base + t] = s_tile[k & 1][count - 1 - t];
    block.sync();
  }
}

// ---------------------------------------------------------------------------------------------
// v1: chapter 01's synchronous kernel (LDG -> STS, BAR, LDS -> STG): the benchmark's yardstick
// ---------------------------------------------------------------------------------------------
__global__ void stream_v1_sync_kernel(const uint4* __restrict__ d_in, uint4* __restrict__ d_out,
                                      std::size_t n_vecs) {
  __shared__ uint4 s_tile[TILE_VECS];  // [256] uint4 = 4 KiB
  const int t = threadIdx.x;
  const std::size_t num_tiles = (n_vecs + TILE_VECS - 1) / TILE_VECS;
  for (std::size_t tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
    const std::size_t base = tile * TILE_VECS;
    const int count = tile_count(n_vecs, base);
    if (t < count) s_tile[t] = d_in[base + t];
    __syncthreads();
    if (t < count) d_out[base + t] = s_tile[count - 1 - t];
    __syncthreads();
  }
}

// ---------------------------------------------------------------------------------------------
// v2: STAGES-deep prefetch through a thread-scope cuda::pipeline
// ---------------------------------------------------------------------------------------------
// The block owns tiles blockIdx.x + k*gridDim.x, k = 0 .. my_tiles-1 (a persistent grid).
// Tile k lives in ring slot k % STAGES: [STAGES][256] uint4 of dynamic shared memory.
//
// What the pipeline calls compile to (thread scope; read <cuda/pipeline>):
//   producer_acquire()            nothing: a thread-scope pipeline has no shared stage state
//   memcpy_async(.., <16>, pipe)  cp.async.cg.shared.global [s], [g], 16, 16  (LDGSTS...BYPASS.128)
//   producer_commit()             cp.async.commit_group (LDGDEPBAR): closes this thread's group
//   consumer_wait_prior<N>()      cp.async.wait_group N (DEPBAR.LE SB0, N): all but the N newest
//                                 of THIS THREAD's groups have landed. CCCL clamps N to 8.
//   consumer_release()            nothing at thread scope
// The groups are per thread and counted, not named: "wait_prior<STAGES-1>" means "tile k" only
// because every iteration commits exactly one group. Hence the rule below: commit even when
// there was nothing to copy.
//
// LESSON: the deadlock. With a block-scope pipeline (cuda::pipeline_shared_state<scope, STAGES>)
// producer_acquire() really waits - for the consumers to release that stage. Acquire STAGES+1
// times before releasing once, and the producer waits for a release that only it could cause
// later: a hang. Here the stage count exists only in our own ring indexing and wait count, so
// the equivalent mistake (issuing tile k+STAGES before tile k was consumed) is not a hang but a
// silent overwrite of a slot someone is still reading; the trailing __syncthreads() prevents it.
template <int STAGES, int WAIT_PRIOR = STAGES - 1>
__global__ void __launch_bounds__(THREADS)
    stream_v2_pipeline_kernel(const uint4* __restrict__ d_in, uint4* __restrict__ d_out,
                              std::size_t n_vecs, int rounds) {
  static_assert(STAGES >= 1, "at least one stage");
  extern __shared__ uint4 s_ring[];  // [STAGES][TILE_VECS] uint4, STAGES x 4 KiB
  const int t = threadIdx.x;
  const std::size_t num_tiles = (n_vecs + TILE_VECS - 1) / TILE_VECS;
  const std::size_t my_tiles =
      blockIdx.x < num_tiles ? (num_tiles - 1 - blockIdx.x) / gridDim.x + 1 : 0;
  if constexpr (WAIT_PRIOR != STAGES - 1) {
    // Only in the negative instantiation (v9): start from a poisoned ring, so that reading a
    // slot whose copy has not landed shows poison or the previous tile, never lucky leftovers.
    for (int j = t; j < STAGES * TILE_VECS; j += THREADS) s_ring[j] = make_uint4(~0u, ~0u, ~0u, ~0u);
    __syncthreads();
  }
  cuda::pipeline<cuda::thread_scope_thread> pipe = cuda::make_pipeline();

  // Producer step: tile k of this block into ring slot `slot`; exactly one commit per call.
  auto produce = [&](std::size_t k, int slot) {
    pipe.producer_acquire();
    if (k < my_tiles) {
      const std::size_t base = (blockIdx.x + k * gridDim.x) * TILE_VECS;
      // EXERCISE-BEGIN: if t < count: 16 B memcpy_async d_in[base + t] -> slot `slot`, on pipe
      if (t < tile_count(n_vecs, base))
        cuda::memcpy_async(&s_ring[slot * TILE_VECS + t], &d_in[base + t],
                           cuda::aligned_size_t<16>(sizeof(uint4)), pipe);
      // EXERCISE-STUB: (void)base;
      // EXERCISE-STUB: (void)slot;
      // EXERCISE-END
    }
    // LESSON: commit even when nothing was issued (past the last tile, or t >= count). An empty
    // group completes at once, and it keeps "the group committed in iteration k" == "tile k".
    // Skip it, and near the end wait_prior<STAGES-1> would count the LAST real tiles as the
    // STAGES-1 allowed to be outstanding: the epilogue would read tiles still in flight.
    pipe.producer_commit();
  };

  // Prologue: fill STAGES-1 slots (tiles 0 .. STAGES-2).
  int produce_slot = 0;
  for (int s = 0; s < STAGES - 1; ++s) {
    produce(static_cast<std::size_t>(s), produce_slot);
    produce_slot = produce_slot + 1 == STAGES ? 0 : produce_slot + 1;
  }
  // Steady state (and, for the last STAGES-1 iterations, the drain: produce() commits empty
  // groups). Iteration k: issue tile k+STAGES-1 into the slot consumed in iteration k-1, then
  // wait for tile k.
  int consume_slot = 0;
  for (std::size_t k = 0; k < my_tiles; ++k) {
    produce(k + STAGES - 1, produce_slot);
    produce_slot = produce_slot + 1 == STAGES ? 0 : produce_slot + 1;
    // k + STAGES groups committed so far; all but the newest STAGES-1 are complete, so group k
    // is: THIS thread's part of tile k has landed in slot consume_slot.
    cuda::pipeline_consumer_wait_prior<WAIT_PRIOR>(pipe);
    // The reversal reads other threads' parts: wait for everyone's wait.
    __syncthreads();
    const std::size_t base = (blockIdx.x + k * gridDim.x) * TILE_VECS;
    const int count = tile_count(n_vecs, base);
    if (t < count) d_out[base + t] = work_vec(s_ring[consume_slot * TILE_VECS + count - 1 - t], rounds);
    pipe.consumer_release();
    // Slot consume_slot is refilled by the produce() of the next iteration: all reads first.
    __syncthreads();
    consume_slot = consume_slot + 1 == STAGES ? 0 : consume_slot + 1;
  }
  // Leave nothing in flight when the block exits. In a correct instance only empty groups
  // remain here (the drain committed them), so this costs nothing; in v9 it retires real copies.
  cuda::pipeline_consumer_wait_prior<0>(pipe);
}

// ---------------------------------------------------------------------------------------------
// v9 (negative): wait_prior<STAGES> instead of wait_prior<STAGES-1>
// ---------------------------------------------------------------------------------------------
// Off by one in the wait count. Instantiated with one stage, where it is wait_prior<1>: "all
// but the newest group" - and the newest group IS the tile about to be read, issued a few
// instructions earlier. The reads see the poisoned ring (first tile) or the previous tile
// (later ones) instead of the tile's data: no copy returns from L2 or DRAM within the few dozen
// cycles between the issue and the __syncthreads() that precedes the read. With more stages the
// same mistake reads a tile issued STAGES-1 iterations earlier, which has usually landed: the
// bug is real but hides, which is why the chapter's negative uses the instance that shows it.
constexpr int NEGATIVE_STAGES = 1;

// ---------------------------------------------------------------------------------------------
// Launchers. `blocks_per_sm` = 0 means full occupancy (as many blocks as fit on an SM).
// ---------------------------------------------------------------------------------------------
inline void launch_stream_v0(const uint4* d_in, uint4* d_out, std::size_t n_vecs, int sm_count,
                             int blocks_per_sm, cudaStream_t s) {
  const unsigned grid =
      tut::persistent_grid(stream_v0_cg_double_kernel, THREADS, sm_count, blocks_per_sm);
  stream_v0_cg_double_kernel<<<grid, THREADS, 0, s>>>(d_in, d_out, n_vecs);
}

inline void launch_stream_v1(const uint4* d_in, uint4* d_out, std::size_t n_vecs, int sm_count,
                             int blocks_per_sm, cudaStream_t s) {
  const unsigned grid =
      tut::persistent_grid(stream_v1_sync_kernel, THREADS, sm_count, blocks_per_sm);
  stream_v1_sync_kernel<<<grid, THREADS, 0, s>>>(d_in, d_out, n_vecs);
}

/// Resident blocks per SM of the STAGES-deep kernel (what "full occupancy" means for it): one
/// SM's worth of a full-occupancy grid, which also opts the kernel in above 48 KiB.
template <int STAGES>
int fit_stream_v2() {
  const std::size_t smem = static_cast<std::size_t>(STAGES) * TILE_BYTES;
  return static_cast<int>(
      tut::persistent_grid(stream_v2_pipeline_kernel<STAGES>, THREADS, /*sm_count=*/1, 0, smem));
}

template <int STAGES, int WAIT_PRIOR = STAGES - 1>
void launch_stream_v2(const uint4* d_in, uint4* d_out, std::size_t n_vecs, int rounds,
                      int sm_count, int blocks_per_sm, cudaStream_t s) {
  const std::size_t smem = static_cast<std::size_t>(STAGES) * TILE_BYTES;  // opted in below
  auto kernel = stream_v2_pipeline_kernel<STAGES, WAIT_PRIOR>;
  const unsigned grid = tut::persistent_grid(kernel, THREADS, sm_count, blocks_per_sm, smem);
  kernel<<<grid, THREADS, smem, s>>>(d_in, d_out, n_vecs, rounds);
}

inline void launch_stream_v9(const uint4* d_in, uint4* d_out, std::size_t n_vecs, int rounds,
                             int sm_count, cudaStream_t s) {
  launch_stream_v2<NEGATIVE_STAGES, NEGATIVE_STAGES>(d_in, d_out, n_vecs, rounds, sm_count, 1, s);
}

/// One entry per instantiated stage count, so sweeps and the registry can loop over them.
struct StageKernel {
  int stages;
  void (*launch)(const uint4*, uint4*, std::size_t, int, int, int, cudaStream_t);
  int (*fit)();
};
inline std::vector<StageKernel> stage_kernels() {
  return {{1, launch_stream_v2<1>, fit_stream_v2<1>},    {2, launch_stream_v2<2>, fit_stream_v2<2>},
          {3, launch_stream_v2<3>, fit_stream_v2<3>},    {4, launch_stream_v2<4>, fit_stream_v2<4>},
          {6, launch_stream_v2<6>, fit_stream_v2<6>},    {8, launch_stream_v2<8>, fit_stream_v2<8>},
          {12, launch_stream_v2<12>, fit_stream_v2<12>}, {16, launch_stream_v2<16>, fit_stream_v2<16>}};
}

// ---------------------------------------------------------------------------------------------
// CPU reference: each 256-uint4 tile reversed (the last, partial tile within itself), then
// `rounds` of work_word on every word.
// ---------------------------------------------------------------------------------------------
inline std::vector<std::uint32_t> reference_reverse_tiles(const std::vector<std::uint32_t>& in,
                                                          int rounds) {
  const std::size_t n_vecs = in.size() / 4;
  std::vector<std::uint32_t> out(in.size());
  for (std::size_t base = 0; base < n_vecs; base += TILE_VECS) {
    const std::size_t count = std::min<std::size_t>(TILE_VECS, n_vecs - base);
    for (std::size_t t = 0; t < count; ++t)
      for (int w = 0; w < 4; ++w)
        out[(base + t) * 4 + w] = work_word(in[(base + count - 1 - t) * 4 + w], rounds);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The problem: one input and one output buffer of `size` bytes, as uint4.
// ---------------------------------------------------------------------------------------------
enum Reference : int { kCopy = 0, kWork = 1 };  // plain reversal; reversal + --rounds of work

struct Problem {
  explicit Problem(const tut::RunConfig& cfg)
      : cfg(cfg), n_words(cfg.size / 4), d_in(n_words), d_out(n_words) {
    h_in.resize(n_words);
    tut::fill_unique_words(h_in.data(), n_words, cfg.seed);
    d_in.upload(h_in);
  }
  void poison(cudaStream_t s) { d_out.poison(s); }
  tut::VerifyResult verify(cudaStream_t s, int reference) {
    const std::vector<std::uint32_t> got = d_out.download(s);
    const int r = reference == kCopy ? 0 : rounds();  // kWork at --rounds=0 is the plain copy
    std::vector<std::uint32_t>& want = r == 0 ? want_copy : want_work;
    if (want.empty()) want = reference_reverse_tiles(h_in, r);
    return tut::compare_exact_words(got.data(), want.data(), n_words);
  }
  double work() const { return 2.0 * static_cast<double>(cfg.size); }
  std::string describe() const { return tut::format_bytes(double(cfg.size)) + " per buffer"; }

  const uint4* in_vecs() const { return reinterpret_cast<const uint4*>(d_in.data()); }
  uint4* out_vecs() { return reinterpret_cast<uint4*>(d_out.data()); }
  std::size_t n_vecs() const { return n_words / 4; }
  int sms() const { return cfg.device.sm_count; }
  int low_blocks_per_sm() const { return static_cast<int>(cfg.extra("blocks-per-sm")); }
  int rounds() const { return static_cast<int>(cfg.extra("rounds")); }

  tut::RunConfig cfg;
  std::size_t n_words;
  tut::DeviceBuffer<std::uint32_t> d_in, d_out;
  std::vector<std::uint32_t> h_in, want_copy, want_work;
};

// ---------------------------------------------------------------------------------------------
// The variant registry. Every stage count at --blocks-per-sm (default 1: the regime where the
// pipeline depth is the only source of bytes in flight), a few at full occupancy.
// ---------------------------------------------------------------------------------------------
inline std::vector<tut::Variant<Problem>> variants() {
  using V = tut::Variant<Problem>;
  std::vector<V> v;
  auto add = [&v](const std::string& key, const std::string& name, const std::string& description,
                  int reference, std::function<void(Problem&, cudaStream_t)> launch) {
    v.push_back(V{key, name, description, std::move(launch)});
    v.back().reference = reference;
  };
  add("v0_cg_double_low", "v0 cg 2 buffers (ch03), low occ",
      "chapter 03: collective copies, two buffers, wait_prior<1>; --blocks-per-sm", kCopy,
      [](Problem& p, cudaStream_t s) {
        launch_stream_v0(p.in_vecs(), p.out_vecs(), p.n_vecs(), p.sms(), p.low_blocks_per_sm(), s);
      });
  add("v1_sync_low", "v1 sync (ch01), low occ",
      "chapter 01: LDG->STS, BAR, LDS->STG at --blocks-per-sm (the benchmark's yardstick)", kCopy,
      [](Problem& p, cudaStream_t s) {
        launch_stream_v1(p.in_vecs(), p.out_vecs(), p.n_vecs(), p.sms(), p.low_blocks_per_sm(), s);
      });
  add("v1_sync_full", "v1 sync (ch01), full occ", "chapter 01's kernel at full occupancy", kCopy,
      [](Problem& p, cudaStream_t s) {
        launch_stream_v1(p.in_vecs(), p.out_vecs(), p.n_vecs(), p.sms(), 0, s);
      });
  for (const StageKernel& k : stage_kernels()) {
    const std::string n = std::to_string(k.stages);
    auto launch = k.launch;
    add("v2_pipe_s" + n + "_low", "v2 pipeline " + n + "-stage, low occ",
        "cuda::pipeline, " + n + " x 4 KiB ring, wait_prior<" + std::to_string(k.stages - 1) +
            ">, --blocks-per-sm, --rounds",
        kWork, [launch](Problem& p, cudaStream_t s) {
          launch(p.in_vecs(), p.out_vecs(), p.n_vecs(), p.rounds(), p.sms(), p.low_blocks_per_sm(), s);
        });
  }
  for (const StageKernel& k : stage_kernels()) {
    if (k.stages != 1 && k.stages != 2 && k.stages != 4 && k.stages != 8 && k.stages != 16) continue;
    const std::string n = std::to_string(k.stages);
    auto launch = k.launch;
    add("v2_pipe_s" + n + "_full", "v2 pipeline " + n + "-stage, full occ",
        "the same kernel with as many blocks per SM as its shared memory allows", kWork,
        [launch](Problem& p, cudaStream_t s) {
          launch(p.in_vecs(), p.out_vecs(), p.n_vecs(), p.rounds(), p.sms(), 0, s);
        });
  }
  add("v9_wrong_wait", "v9 BROKEN: wait_prior<STAGES>",
      "negative: 1 stage waiting on prior<1> instead of prior<0>; must FAIL", kWork,
      [](Problem& p, cudaStream_t s) {
        launch_stream_v9(p.in_vecs(), p.out_vecs(), p.n_vecs(), p.rounds(), p.sms(), s);
      });
  v.back().negative = true;
  return v;
}

}  // namespace ch04
