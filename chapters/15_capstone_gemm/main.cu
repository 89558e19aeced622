// Chapter 15 driver: the GEMM table at --size (default 4096), then a size sweep 1024..8192
// that reports TFLOP/s, % of cuBLAS and the speed-up of each step over the previous one
// (tut::gemm_size_sweep, common/gemm_host.cuh).
// The lesson is in kernels.cuh and README.md.
// Run:    build/bin/ch15_capstone_gemm [--size=4096] [--variant=v4_cp_async,cublas] [--list]
// Output: the harness table in GFLOP/s with % of cuBLAS, then the size sweep 1024..8192
//         (written beside --json as <json>.sweep.json), each configuration checked first.
#include <string>

#include "host.cuh"

int main(int argc, char** argv) {
  tut::Chapter<ch15::Problem> ch;
  ch.id = "ch15_capstone_gemm";
  ch.title = "Chapter 15: capstone SGEMM, naive -> tiles -> registers -> cp.async -> TMA, vs cuBLAS";
  tut::set_square_gemm_sizes(ch, 3, 4);  // A, B, C in fp32
  // Why these sizes, and how the largest makes every ring wrap: ch15::check_sizes(), host.cuh.
  ch.check_sizes = ch15::check_sizes();
  ch.variants = ch15::variants();
  ch.after_table = [](const tut::RunConfig& base, cudaStream_t s, const std::string& json) {
    return tut::gemm_size_sweep(base, s, json, "ch15_capstone_gemm", ch15::variants());
  };
  // The point: the same register-blocked kernel fed by TMA against it fed synchronously.
  ch.tour_lesson = "v5_tma";
  ch.tour_baseline = "v3_register";
  return tut::run_chapter(argc, argv, ch);
}
