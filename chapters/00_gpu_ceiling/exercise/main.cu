// EXERCISE copy of ../main.cu (tools/make_exercise.py); edit kernels.cuh, not this.
// Chapter 00 driver: the copy table from the harness, then the device properties and a size
// sweep that shows where the L2 cache stops flattering bandwidth numbers.
#include <cstdio>

#include "kernels.cuh"

namespace {

// Time cudaMemcpyAsync and the v3 kernel at sizes from 1 MiB to 2 GiB per buffer. Small
// working sets (in + out below the L2 size) are served partly from L2 across repeats, so
// they report more than DRAM can deliver. Returns false if any sweep copy was wrong.
bool size_sweep(const tut::RunConfig& base, cudaStream_t stream, const std::string& json_path) {
  std::printf("\nDevice properties:\n%s", tut::describe_device(base.device).c_str());
  std::printf("\nSize sweep (GB/s = bytes read + written per second; L2 = %s):\n",
              tut::format_bytes(double(base.device.l2_bytes)).c_str());
  std::printf("%12s | %12s | %12s | %s\n", "per buffer", "memcpy GB/s", "v3 GB/s", "check");
  std::string json = "{\"chapter\": \"ch00_gpu_ceiling\", \"sweep\": [";
  bool ok = true;
  for (std::uint64_t size = 1ull << 20; size <= 2ull << 30; size *= 4) {
    tut::RunConfig cfg = base;
    cfg.size = size;
    ch00::Problem p(cfg);
    const int sms = cfg.device.sm_count;
    p.poison(stream);
    ch00::launch_copy_v3(p.d_in.data(), p.d_out.data(), p.n_words, sms, stream);
    CUDA_CHECK_LAST_LAUNCH();
    const bool passed = p.verify(stream, 0).ok();
    ok = ok && passed;
    const tut::Timing t_memcpy = tut::time_on_stream(stream, 3, 20, [&](cudaStream_t s) {
      ch00::launch_copy_v0(p.d_in.data(), p.d_out.data(), p.n_words, s);
    });
    const tut::Timing t_kernel = tut::time_on_stream(stream, 3, 20, [&](cudaStream_t s) {
      ch00::launch_copy_v3(p.d_in.data(), p.d_out.data(), p.n_words, sms, s);
      CUDA_CHECK_LAST_LAUNCH();
    });
    const double memcpy_rate = tut::rate_per_second_1e9(p.work(), t_memcpy.median_ms);
    const double kernel_rate = tut::rate_per_second_1e9(p.work(), t_kernel.median_ms);
    std::printf("%12s | %12.1f | %12.1f | %s\n", tut::format_bytes(double(size)).c_str(),
                memcpy_rate, kernel_rate, passed ? "PASS" : "FAIL");
    json += std::string(size == (1ull << 20) ? "" : ",") + "\n  {\"bytes_per_buffer\": " +
            std::to_string(size) + ", \"memcpy_gbs\": " + std::to_string(memcpy_rate) +
            ", \"v3_gbs\": " + std::to_string(kernel_rate) +
            ", \"passed\": " + (passed ? "true" : "false") + "}";
  }
  json += "\n]}\n";
  ok = tut::write_sweep_json(json_path, json) && ok;
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  tut::Chapter<ch00::Problem> ch;
  ch.id = "ch00_gpu_ceiling";
  ch.title = "Chapter 00: your GPU and its ceiling (cudaMemcpyAsync vs plain copy kernels)";
  ch.size_help = "bytes per buffer, a multiple of 4 (default 1G)";
  ch.size_multiple = 4;
  ch.max_size = 16ull << 30;
  ch.default_size = [](const tut::DeviceSummary&) { return std::uint64_t{1} << 30; };
  ch.check_sizes = {4, 12, 4100, 65536 + 12, (1u << 20) + 4, 16u << 20};
  ch.device_bytes = [](std::uint64_t size) { return 4 * size + (size_t{64} << 20); };
  ch.memcpy_ceiling = false;  // v0 *is* the memcpy ceiling, timed like every other variant
  ch.variants = ch00::variants();
  ch.after_table = size_sweep;
  return tut::run_chapter(argc, argv, ch);
}
