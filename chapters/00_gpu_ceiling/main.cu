// Chapter 00: the copy table from the harness, then the device properties and a size sweep
// that shows where the L2 cache stops flattering bandwidth figures.
#include <cstdio>

#include "common/report.hpp"

#include "host.cuh"  // the variants, the Problem, the sizes; it includes kernels.cuh

namespace {

// cudaMemcpyAsync (v0) and the v3 kernel at 1, 4, 16, 64, 256 MiB and 1 GiB per buffer. Small
// working sets (input + output below the L2 size) are served partly from L2 across repeats,
// so they report more than DRAM can deliver. Each configuration is checked once (poisoned
// output, launch, compare) before it is timed; returns false if any check failed.
bool size_sweep(const tut::RunConfig& base, cudaStream_t stream, const std::string& json_path) {
  std::printf("\nDevice properties:\n%s", tut::describe_device(base.device).c_str());
  std::printf("\nSize sweep (GB/s = bytes read + written per second; L2 = %s):\n",
              tut::format_bytes(double(base.device.l2_bytes)).c_str());
  std::printf("%12s | %12s | %12s | %s\n", "per buffer", "memcpy GB/s", "v3 GB/s", "check");
  const std::vector<tut::Variant<ch00::Problem>> all = ch00::variants();
  const tut::Variant<ch00::Problem>* memcpy_variant = nullptr;
  const tut::Variant<ch00::Problem>* kernel_variant = nullptr;
  for (const auto& v : all) {
    if (v.key == "v0_memcpy") memcpy_variant = &v;
    if (v.key == "v3_vec4_x4") kernel_variant = &v;
  }
  tut::SweepJson json("ch00_gpu_ceiling");
  json.array("sweep");
  bool ok = true;
  constexpr std::uint64_t kFirst = std::uint64_t{1} << 20, kLast = std::uint64_t{1} << 30;
  for (std::uint64_t size = kFirst; size <= kLast; size *= 4) {
    tut::RunConfig cfg = base;
    cfg.size = size;
    ch00::Problem p(cfg);
    const bool passed = tut::run_and_verify(p, *memcpy_variant, stream).ok() &&
                        tut::run_and_verify(p, *kernel_variant, stream).ok();
    ok = ok && passed;
    const tut::Timing t_memcpy = tut::time_variant(p, *memcpy_variant, stream, 3, 20);
    const tut::Timing t_kernel = tut::time_variant(p, *kernel_variant, stream, 3, 20);
    const double memcpy_rate = tut::rate_per_second_1e9(p.work(), t_memcpy.median_ms);
    const double kernel_rate = tut::rate_per_second_1e9(p.work(), t_kernel.median_ms);
    std::printf("%12s | %12.1f | %12.1f | %s\n", tut::format_bytes(double(size)).c_str(),
                memcpy_rate, kernel_rate, passed ? "PASS" : "FAIL");
    json.add(tut::SweepRow()
                 .integer("bytes_per_buffer", static_cast<long long>(size))
                 .num("memcpy_gbs", memcpy_rate)
                 .num("v3_gbs", kernel_rate)
                 .passed(passed));
  }
  ok = tut::write_sweep_json(json_path, json.str()) && ok;
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  tut::Chapter<ch00::Problem> ch;
  ch.id = "ch00_gpu_ceiling";
  ch.title = "Chapter 00: your GPU and its ceiling (cudaMemcpyAsync vs plain copy kernels)";
  ch00::set_sizes(ch);
  ch.memcpy_ceiling = false;  // v0 *is* the memcpy ceiling, timed like every other variant
  ch.variants = ch00::variants();
  ch.after_table = size_sweep;
  // The point: 16 bytes per load instruction against 4, both at full occupancy.
  ch.tour_lesson = "v2_vec4";
  ch.tour_baseline = "v1_word";
  return tut::run_chapter(argc, argv, ch);
}
