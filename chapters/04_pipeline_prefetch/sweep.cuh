/// @file sweep.cuh
/// @brief Chapter 04's two sweeps, run after the table: where does pipeline depth pay?
//
// Chapter 04's sweeps, run after the table (ch.after_table): where does pipeline depth pay?
//   1. stages x blocks per SM, --rounds=0: bytes in flight per SM = blocks x stages x 4 KiB.
//   2. stages x rounds at --blocks-per-sm: how much compute the copies can hide behind.
// Every point is a configuration (kernel, blocks per SM, rounds) that is first checked once at
// the sweep's size with tut::run_and_verify (poisoned output, bit-exact comparison with the
// CPU reference), then timed: the median of kSweepRepeats event-timed runs after kSweepWarmup,
// reading and writing --size bytes each (1 GiB by default, far beyond the L2). A point that
// fails its check is printed as FAIL instead of a number, left out of the JSON, and fails the
// run.
// Writes <--json>.sweep.json, the input of plot_sweep.py.
#pragma once

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "common/device_buffer.cuh"
#include "common/harness.cuh"
#include "kernels.cuh"
#include "problem.cuh"

namespace ch04 {

constexpr int kSweepWarmup = 3;
constexpr int kSweepRepeats = 10;

// Counts the words where `got` differs from `want`: the sweep's check runs on the GPU, since
// it checks about a hundred configurations at the full size (the expected output is still the
// CPU reference, computed on the host and uploaded once per --rounds value).
__global__ void count_mismatched_words_kernel(const uint4* __restrict__ got,
                                              const uint4* __restrict__ want, std::size_t n_vecs,
                                              unsigned long long* mismatches) {
  unsigned long long local = 0;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n_vecs;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const uint4 a = got[i], b = want[i];
    local += (a.x != b.x) + (a.y != b.y) + (a.z != b.z) + (a.w != b.w);
  }
  if (local) atomicAdd(mismatches, local);
}

/// The sweep's problem: chapter 04's Problem plus the expected output on the GPU.
struct SweepProblem : Problem {
  explicit SweepProblem(const tut::RunConfig& cfg) : Problem(cfg), d_want(n_words), d_count(1) {}
  tut::VerifyResult verify(cudaStream_t s, int reference) {
    const int r = reference == kCopy ? 0 : rounds;
    if (uploaded_rounds != r) {
      d_want.upload(reference_reverse_tiles(h_in, r));
      uploaded_rounds = r;
    }
    CUDA_CHECK(cudaMemsetAsync(d_count.data(), 0, sizeof(unsigned long long), s));
    count_mismatched_words_kernel<<<4 * sms(), 256, 0, s>>>(
        out_vecs(), reinterpret_cast<const uint4*>(d_want.data()), n_vecs(), d_count.data());
    CUDA_CHECK_LAST_LAUNCH();
    tut::VerifyResult result;
    result.checked = n_words;
    result.mismatches = static_cast<std::size_t>(d_count.download(s)[0]);
    result.what = "exact";
    if (result.mismatches != 0) return Problem::verify(s, reference);  // the details, on the host
    return result;
  }
  tut::DeviceBuffer<std::uint32_t> d_want;
  tut::DeviceBuffer<unsigned long long> d_count;
  int uploaded_rounds = -1;
};

/// Resident blocks per SM of the STAGES-deep kernel: the occupancy query that also opts the
/// kernel in above 48 KiB (done once, before any timing).
template <int STAGES>
int blocks_that_fit_v2() {
  return static_cast<int>(tut::persistent_grid(stream_v2_pipeline_kernel<STAGES>, THREADS, 1, 0,
                                               static_cast<std::size_t>(STAGES) * TILE_BYTES));
}

/// The instantiated stage counts that the sweeps walk: the untraced launcher of each, and the
/// occupancy query of each (the registry in main.cu names the same counts one by one).
using PipelineLaunch = void (*)(const uint4*, uint4*, std::size_t, int, int, int, cudaStream_t);
struct StageKernel {
  int stages;
  PipelineLaunch launch;
  int (*blocks_that_fit)();
};
inline std::vector<StageKernel> stage_kernels() {
  return {{1, launch_stream_v2<1>, blocks_that_fit_v2<1>},
          {2, launch_stream_v2<2>, blocks_that_fit_v2<2>},
          {3, launch_stream_v2<3>, blocks_that_fit_v2<3>},
          {4, launch_stream_v2<4>, blocks_that_fit_v2<4>},
          {6, launch_stream_v2<6>, blocks_that_fit_v2<6>},
          {8, launch_stream_v2<8>, blocks_that_fit_v2<8>},
          {12, launch_stream_v2<12>, blocks_that_fit_v2<12>},
          {16, launch_stream_v2<16>, blocks_that_fit_v2<16>}};
}
/// The deepest ring instantiated (the check sizes give it laps: problem.cuh).
constexpr int kDeepestStages = 16;

inline bool run_sweeps(const tut::RunConfig& cfg, cudaStream_t stream, const std::string& json_path) {
  SweepProblem p(cfg);
  const double work = p.work();
  bool all_passed = true;
  // One configuration: checked once, then timed. Returns GB/s, or -1 when the check failed.
  auto check_and_time = [&](const std::string& what, int reference,
                            std::function<void(SweepProblem&, cudaStream_t)> launch) {
    tut::Variant<SweepProblem> v;
    v.key = what;
    v.reference = reference;
    v.launch = std::move(launch);
    const tut::VerifyResult r = tut::run_and_verify(p, v, stream);
    if (!r.ok()) {
      std::printf("\n[sweep %s] %s\n%s", what.c_str(), r.summary().c_str(), r.details().c_str());
      all_passed = false;
      return -1.0;
    }
    const double ms = tut::time_variant(p, v, stream, kSweepWarmup, kSweepRepeats).median_ms;
    return tut::rate_per_second_1e9(work, ms);
  };
  auto print_gbs = [](double gbs) {
    if (gbs < 0) std::printf(" | %10s", "FAIL");
    else std::printf(" | %10.1f", gbs);
  };
  const double memcpy_gbs = tut::rate_per_second_1e9(
      work, tut::time_on_stream(stream, kSweepWarmup, kSweepRepeats, [&](cudaStream_t s) {
              CUDA_CHECK(cudaMemcpyAsync(p.d_out.data(), p.d_in.data(), p.d_in.bytes(),
                                         cudaMemcpyDeviceToDevice, s));
            }).median_ms);
  const int sms = p.sms();
  tut::SweepJson json("ch04_pipeline_prefetch");
  json.text("device", cfg.device.name)
      .integer("sm_count", sms)
      .integer("bytes_per_buffer", static_cast<long long>(cfg.size))
      .integer("tile_bytes", TILE_BYTES)
      .num("memcpy_gbs", memcpy_gbs);

  // 1. stages x blocks per SM at rounds 0. "stages 0" is chapter 01's synchronous kernel.
  const int blocks_list[] = {1, 2, 3, 4, 6, 8};
  std::printf("\nSweep 1: GB/s by pipeline stages x blocks per SM (--rounds=0; memcpy %.1f GB/s;"
              " every point checked first)\n", memcpy_gbs);
  std::printf("%-12s", "stages");
  for (int b : blocks_list) std::printf(" | %7d/SM", b);
  std::printf("\n");
  json.array("occupancy");
  p.rounds = 0;
  auto occupancy_row = [&](int stages, int fit, const PipelineLaunch launch) {
    std::printf("%-12s", stages == 0 ? "sync (ch01)" : std::to_string(stages).c_str());
    for (int b : blocks_list) {
      if (b > fit) {
        std::printf(" | %10s", "-");
        continue;
      }
      const std::string what = "stages " + std::to_string(stages) + ", " + std::to_string(b) + "/SM";
      const double gbs = check_and_time(what, stages == 0 ? kCopy : kWork,
                                        [launch, b](SweepProblem& q, cudaStream_t s) {
                                          launch(q.in_vecs(), q.out_vecs(), q.n_vecs(), q.rounds,
                                                 q.sms(), b, s);
                                        });
      print_gbs(gbs);
      if (gbs < 0) continue;
      json.add(tut::SweepRow()
                   .integer("stages", stages)
                   .integer("blocks_per_sm", b)
                   .num("gbs", gbs)
                   .num("pct_of_memcpy", 100.0 * gbs / memcpy_gbs));
    }
    std::printf("\n");
  };
  occupancy_row(0, tut::max_blocks_per_sm(stream_v1_sync_kernel<>, THREADS),
                [](const uint4* in, uint4* out, std::size_t n, int, int sm_count, int b,
                   cudaStream_t s) { launch_stream_v1(in, out, n, sm_count, b, s); });
  for (const StageKernel& k : stage_kernels())
    occupancy_row(k.stages, k.blocks_that_fit(), k.launch);

  // 2. stages x rounds at the chapter's low occupancy. Rounds in the outer loop, so the CPU
  //    reference is computed once per rounds value; printed as one row per stage count.
  const int blocks = tut::blocks_per_sm(cfg);
  const std::vector<int> rounds_list = {0, 1, 4, 16, 64, 256};
  const std::vector<StageKernel> stages = stage_kernels();
  std::vector<std::vector<double>> gbs(stages.size(), std::vector<double>(rounds_list.size()));
  std::vector<std::vector<double>> ms(stages.size(), std::vector<double>(rounds_list.size()));
  for (std::size_t j = 0; j < rounds_list.size(); ++j) {
    p.rounds = rounds_list[j];
    for (std::size_t i = 0; i < stages.size(); ++i) {
      const PipelineLaunch launch = stages[i].launch;
      gbs[i][j] = check_and_time(
          "stages " + std::to_string(stages[i].stages) + ", rounds " + std::to_string(p.rounds),
          kWork, [launch, blocks](SweepProblem& q, cudaStream_t s) {
            launch(q.in_vecs(), q.out_vecs(), q.n_vecs(), q.rounds, q.sms(), blocks, s);
          });
      ms[i][j] = gbs[i][j] > 0 ? 1e3 * work / (gbs[i][j] * 1e9) : -1.0;
    }
  }
  std::printf("\nSweep 2: GB/s by pipeline stages x rounds (IMAD per word), %d block(s)/SM;"
              " every point checked first\n", blocks);
  std::printf("%-12s", "stages");
  for (int r : rounds_list) std::printf(" | %6d rnd", r);
  std::printf("\n");
  json.integer("intensity_blocks_per_sm", blocks).array("intensity");
  for (std::size_t i = 0; i < stages.size(); ++i) {
    std::printf("%-12d", stages[i].stages);
    for (std::size_t j = 0; j < rounds_list.size(); ++j) {
      print_gbs(gbs[i][j]);
      if (gbs[i][j] < 0) continue;
      json.add(tut::SweepRow()
                   .integer("stages", stages[i].stages)
                   .integer("rounds", rounds_list[j])
                   .num("ms", ms[i][j])
                   .num("gbs", gbs[i][j]));
    }
    std::printf("\n");
  }
  if (!all_passed) std::printf("sweep: some configurations FAILED their check (see above)\n");
  if (!tut::write_sweep_json(json_path, json.str())) return false;
  if (!json_path.empty())
    std::printf("plot: python3 chapters/04_pipeline_prefetch/plot_sweep.py %s.sweep.json\n",
                json_path.c_str());
  return all_passed;
}

}  // namespace ch04
