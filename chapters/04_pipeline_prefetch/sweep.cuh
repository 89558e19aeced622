// Chapter 04's sweeps, run after the table (ch.after_table): where does pipeline depth pay?
//   1. stages x blocks per SM, --rounds=0: bytes in flight per SM = blocks x stages x 4 KiB.
//   2. stages x rounds at --blocks-per-sm: how much compute the copies can hide behind.
// Each point is the median of kRepeats event-timed runs after kWarmup, on 2 x --size buffers
// (1 GiB each by default, far beyond the L2). Outputs are not re-verified here: the table
// verified every registered kernel at the full size, and the kernels do not depend on the
// launch shape for correctness (the tests check several blocks per SM).
// Writes <--json>.sweep.json, the input of plot_sweep.py.
#pragma once

#include <cstdio>
#include <string>

// The includer includes its kernels.cuh first (main.cu, or exercise/main.cu with the exercise's
// kernels.cuh): including "kernels.cuh" from here would always pick this directory's solution.
#ifndef CH04_KERNELS_INCLUDED
#error "include kernels.cuh before sweep.cuh"
#endif

namespace ch04 {

constexpr int kSweepWarmup = 3;
constexpr int kSweepRepeats = 10;

inline bool run_sweeps(const tut::RunConfig& cfg, cudaStream_t stream, const std::string& json_path) {
  const std::size_t n_vecs = cfg.size / 16;
  tut::DeviceBuffer<uint4> d_in(n_vecs), d_out(n_vecs);
  CUDA_CHECK(cudaMemsetAsync(d_in.data(), 0x5A, d_in.bytes(), stream));
  const int sms = cfg.device.sm_count;
  const double work = 2.0 * static_cast<double>(cfg.size);
  auto time_ms = [&](const std::function<void(cudaStream_t)>& launch) {
    return tut::time_on_stream(stream, kSweepWarmup, kSweepRepeats, [&](cudaStream_t s) {
             launch(s);
             CUDA_CHECK_LAST_LAUNCH();
           }).median_ms;
  };
  const double memcpy_gbs = tut::rate_per_second_1e9(work, time_ms([&](cudaStream_t s) {
    CUDA_CHECK(cudaMemcpyAsync(d_out.data(), d_in.data(), d_in.bytes(), cudaMemcpyDeviceToDevice, s));
  }));

  std::string json = "{\"chapter\": \"ch04_pipeline_prefetch\", \"device\": \"" + cfg.device.name +
                     "\", \"sm_count\": " + std::to_string(sms) +
                     ", \"bytes_per_buffer\": " + std::to_string(cfg.size) +
                     ", \"tile_bytes\": " + std::to_string(TILE_BYTES) +
                     ", \"memcpy_gbs\": " + std::to_string(memcpy_gbs);

  // 1. stages x blocks per SM. "stages 0" is chapter 01's synchronous kernel.
  const int blocks_list[] = {1, 2, 3, 4, 6, 8};
  std::printf("\nSweep 1: GB/s by pipeline stages x blocks per SM (--rounds=0; memcpy %.1f GB/s)\n",
              memcpy_gbs);
  std::printf("%-12s", "stages");
  for (int b : blocks_list) std::printf(" | %7d/SM", b);
  std::printf("\n");
  json += ", \"occupancy\": [";
  bool first = true;
  auto occupancy_row = [&](int stages, int fit,
                           const std::function<void(int, cudaStream_t)>& launch_at) {
    std::printf("%-12s", stages == 0 ? "sync (ch01)" : std::to_string(stages).c_str());
    for (int b : blocks_list) {
      if (b > fit) {
        std::printf(" | %10s", "-");
        continue;
      }
      const double gbs = tut::rate_per_second_1e9(work, time_ms([&](cudaStream_t s) { launch_at(b, s); }));
      std::printf(" | %10.1f", gbs);
      json += std::string(first ? "" : ",") + "\n  {\"stages\": " + std::to_string(stages) +
              ", \"blocks_per_sm\": " + std::to_string(b) + ", \"gbs\": " + std::to_string(gbs) +
              ", \"pct_of_memcpy\": " + std::to_string(100.0 * gbs / memcpy_gbs) + "}";
      first = false;
    }
    std::printf("\n");
  };
  occupancy_row(0, tut::max_blocks_per_sm(stream_v1_sync_kernel, THREADS), [&](int b, cudaStream_t s) {
    launch_stream_v1(d_in.data(), d_out.data(), n_vecs, sms, b, s);
  });
  for (const StageKernel& k : stage_kernels())
    occupancy_row(k.stages, k.fit(), [&](int b, cudaStream_t s) {
      k.launch(d_in.data(), d_out.data(), n_vecs, 0, sms, b, s);
    });
  json += "\n]";

  // 2. stages x rounds at the chapter's low occupancy.
  const int blocks = static_cast<int>(cfg.extra("blocks-per-sm"));
  const int rounds_list[] = {0, 1, 4, 16, 64, 256};
  std::printf("\nSweep 2: GB/s by pipeline stages x rounds (IMAD per word), %d block(s)/SM\n", blocks);
  std::printf("%-12s", "stages");
  for (int r : rounds_list) std::printf(" | %6d rnd", r);
  std::printf("\n");
  json += ", \"intensity_blocks_per_sm\": " + std::to_string(blocks) + ", \"intensity\": [";
  first = true;
  for (const StageKernel& k : stage_kernels()) {
    std::printf("%-12d", k.stages);
    for (int r : rounds_list) {
      const double ms = time_ms([&](cudaStream_t s) {
        k.launch(d_in.data(), d_out.data(), n_vecs, r, sms, blocks, s);
      });
      const double gbs = tut::rate_per_second_1e9(work, ms);
      std::printf(" | %10.1f", gbs);
      json += std::string(first ? "" : ",") + "\n  {\"stages\": " + std::to_string(k.stages) +
              ", \"rounds\": " + std::to_string(r) + ", \"ms\": " + std::to_string(ms) +
              ", \"gbs\": " + std::to_string(gbs) + "}";
      first = false;
    }
    std::printf("\n");
  }
  json += "\n]}\n";
  if (!tut::write_sweep_json(json_path, json)) return false;
  if (!json_path.empty())
    std::printf("plot: python3 chapters/04_pipeline_prefetch/plot_sweep.py %s.sweep.json\n",
                json_path.c_str());
  return true;
}

}  // namespace ch04
