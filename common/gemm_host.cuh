/// @file gemm_host.cuh
/// @brief The host side the GEMM chapters (15 and 16) share: cuBLAS's error check and handle,
///        the TMA encoder fetched at run time and a 2D tensor map built with it, the part of
///        the Problem that holds the matrices and checks a result against its oracle (the CPU
///        in fp64, or cuBLAS at large sizes), the chapters' size settings and their size sweep
///        against cuBLAS.
#pragma once

#include <cublas_v2.h>
#include <cuda.h>          // CUtensorMap and the encoder's types
#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bounded_wait.cuh"
#include "cuda_check.cuh"
#include "device_buffer.cuh"
#include "gemm_args.cuh"
#include "gpu_state.hpp"
#include "harness.cuh"
#include "report.hpp"
#include "stats.hpp"
#include "timer.cuh"
#include "verify.hpp"

/// Check a cuBLAS call; on failure print the status, the expression and file:line, exit 1.
#define CUBLAS_CHECK(expr)                                                                \
  do {                                                                                    \
    const cublasStatus_t tut_cublas_status_ = (expr);                                     \
    if (tut_cublas_status_ != CUBLAS_STATUS_SUCCESS) {                                    \
      std::fprintf(stderr, "cuBLAS error %d (%s)\n  in: %s\n  at %s:%d\n",                \
                   static_cast<int>(tut_cublas_status_),                                  \
                   cublasGetStatusString(tut_cublas_status_), #expr, __FILE__, __LINE__); \
      std::exit(tut::kExitCudaError);                                                     \
    }                                                                                     \
  } while (0)

namespace tut {

/// @brief Above this many multiply-adds the CPU reference is too slow; cuBLAS is the oracle.
inline constexpr double kCpuReferenceMaxMacs = 3.0e8;

/// @brief One cuBLAS handle, created with the Problem and destroyed with it.
class CublasHandle {
 public:
  CublasHandle() { CUBLAS_CHECK(cublasCreate(&handle_)); }
  ~CublasHandle() { cublasDestroy(handle_); }
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;
  operator cublasHandle_t() const { return handle_; }

 private:
  cublasHandle_t handle_ = nullptr;
};

/// @brief cuTensorMapEncodeTiled, a driver API call, fetched through the runtime so the binary
///        does not link libcuda (it must start, and skip, on a machine without a driver).
inline PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000,
                                              cudaEnableDefault, &found));
  if (found != cudaDriverEntryPointSuccess || fn == nullptr) {
    std::fprintf(stderr, "cuTensorMapEncodeTiled not available from this driver\n");
    std::exit(kExitCudaError);
  }
  return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
}

/// @brief A 2D tensor map over a row-major [rows x cols] matrix at @p base whose rows are
///        @p row_bytes apart (a multiple of 16: TMA's rule for global strides), read or written
///        in boxes of [box_rows x box_cols] elements. Coordinates are innermost first (column,
///        row). Box elements outside the matrix are read as zeros and never written.
inline CUtensorMap make_2d_tensor_map(CUtensorMapDataType type, const void* base, int rows,
                                      int cols, std::uint64_t row_bytes, int box_rows, int box_cols,
                                      CUtensorMapSwizzle swizzle,
                                      CUtensorMapL2promotion l2_promotion) {
  static const PFN_cuTensorMapEncodeTiled_v12000 encode = tensor_map_encoder();
  CUtensorMap map;
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {row_bytes};  // of dimension 1, in bytes
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(box_cols), static_cast<cuuint32_t>(box_rows)};
  const cuuint32_t elem_strides[2] = {1, 1};
  CU_CHECK(encode(&map, type, 2, const_cast<void*>(base), dims, strides, box, elem_strides,
                  CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, l2_promotion,
                  CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  return map;
}

/// @brief A GEMM's extents: C [M x N] = A [M x K] times B (K x N, or N x K in chapter 16).
struct GemmShape {
  int M, N, K;
  /// The chapters' runs: square M = N = K = --size.
  static GemmShape square(const RunConfig& cfg) {
    const int n = static_cast<int>(cfg.size);
    return GemmShape{n, n, n};
  }
};

/// @brief What the Problems of the GEMM chapters share: A [M x K], B (K x N in chapter 15,
///        N x K in chapter 16: @p b_rows rows), C [M x N], with row pitches lda, ldb, ldc in
///        elements; the error word a bounded wait reports into; the oracle's answer and its
///        tolerance; cuBLAS; and the harness's poison/verify/work. A chapter's Problem derives
///        from it, fills A and B, and sets want, oracle and the tolerance.
template <class T>
struct GemmProblem {
  GemmProblem(int m, int n, int k, int b_rows, int ld_a, int ld_b, int ld_c)
      : M(m),
        N(n),
        K(k),
        lda(ld_a),
        ldb(ld_b),
        ldc(ld_c),
        d_a(static_cast<std::size_t>(m) * ld_a),
        d_b(static_cast<std::size_t>(b_rows) * ld_b),
        d_c(static_cast<std::size_t>(m) * ld_c) {}

  void poison(cudaStream_t s) {
    d_c.poison(s);
    error.clear(s);
  }
  /// A timeout reported in the error word fails the check even where every element matches
  /// (the wait may have given up after the last store). ErrorWord::report prints one sentence
  /// per distinct wait that gave up (who waited on which barrier, slot, parity and k-tile).
  VerifyResult verify(cudaStream_t s, int /*reference*/) {
    const unsigned err = error.report(s);
    const std::vector<float> got = compact(d_c.download(s));
    VerifyResult r = compare_close_floats(got.data(), want.data(), got.size(), abs_tol, rel_tol);
    if (err != 0 && r.mismatches == 0) r.mismatches = 1;
    r.what += " vs " + oracle;
    return r;
  }
  double work() const { return 2.0 * M * N * K; }
  GemmArgs<T> args() {
    return GemmArgs<T>{d_a.data(), d_b.data(), d_c.data(), M, N, K, lda, ldb, ldc, error.data()};
  }
  /// "M=.. N=.. K=..", the start of describe().
  std::string shape_text() const {
    return "M=" + std::to_string(M) + " N=" + std::to_string(N) + " K=" + std::to_string(K);
  }
  /// The M x N valid elements of a pitched C, as floats.
  std::vector<float> compact(const std::vector<T>& pitched) const {
    std::vector<float> out(static_cast<std::size_t>(M) * N);
    for (int r = 0; r < M; ++r)
      for (int c = 0; c < N; ++c)
        out[static_cast<std::size_t>(r) * N + c] =
            static_cast<float>(pitched[static_cast<std::size_t>(r) * ldc + c]);
    return out;
  }

  int M, N, K, lda, ldb, ldc;
  DeviceBuffer<T> d_a, d_b, d_c;
  ErrorWord error;
  CublasHandle blas;
  std::vector<float> want;              ///< the M x N product the check compares with
  std::string oracle;                   ///< who computed it: "CPU fp64" or "cuBLAS"
  double abs_tol = 0.0, rel_tol = 0.0;  ///< |got - want| <= abs_tol + rel_tol |want|
};

/// @brief The size settings of a square GEMM chapter (M = N = K = --size, default 4096): at
///        most 16384, which keeps every element index below 2^31 (int arithmetic in the
///        kernels). The GPU holds @p matrices n x n matrices of @p element_bytes, rows padded to
///        16 bytes, plus 512 MiB for cuBLAS's workspace. The result is in GFLOP/s against the
///        cuBLAS row (the variant marked is_ceiling), not against a memcpy.
template <class Problem>
void set_square_gemm_sizes(Chapter<Problem>& ch, int matrices, int element_bytes) {
  ch.size_help = "matrix dimension N for square M = N = K (default 4096)";
  ch.size_multiple = 1;
  ch.max_size = 16384;
  ch.default_size = [](const DeviceSummary&) { return std::uint64_t{4096}; };
  ch.device_bytes = [matrices, element_bytes](std::uint64_t n) {
    const std::uint64_t row_bytes = (n * element_bytes + 15) / 16 * 16;
    return matrices * n * row_bytes + (std::uint64_t{512} << 20);
  };
  ch.metric = "GFLOP/s";
  ch.memcpy_ceiling = false;
}

/// @brief Every variant this GPU runs, except the negatives, at M = N = K = 1024, 2048, 4096
///        and 8192: checked against the oracle (cuBLAS from 2048 up, its result computed once
///        per size), then timed in alternation with cuBLAS (the row marked is_ceiling): A, B,
///        A, B, ..., at least kMinAlternatingPairs pairs after the same idle time and warm-ups,
///        the same method as the chapter's table, so the two agree at the size they share. "% of cuBLAS" is the median of the
///        pairs' ratios (quartiles in the JSON); cuBLAS's own row is the median of all its
///        samples at that size. Prints TFLOP/s and each step's speed-up over the step before it,
///        logs the SM clock and power at the start and end of each timed block, and writes the
///        sweep beside --json.
/// @return false if any check failed (or the file could not be written)
template <class Problem>
bool gemm_size_sweep(const RunConfig& base, cudaStream_t stream, const std::string& json_path,
                     const std::string& chapter_id, const std::vector<Variant<Problem>>& all) {
  std::printf("\nSize sweep (M = N = K; TFLOP/s = 2*M*N*K / time; %% of cuBLAS: the median of "
              "%d alternating pairs, the variant then cuBLAS):\n",
              kMinAlternatingPairs);
  std::printf("%6s | %-40s | %10s | %9s | %9s | %13s | %8s | %s\n", "size", "variant",
              "median ms", "TFLOP/s", "% cuBLAS", "quartiles", "vs prev", "check");
  SweepJson json(chapter_id);
  json.array("sweep");
  GpuStateLog gpu_log;
  bool ok = true;
  const Variant<Problem>* cublas = nullptr;
  for (const auto& v : all)
    if (v.is_ceiling && why_variant_cannot_run(v, base.device).empty()) cublas = &v;
  if (!cublas) {
    std::printf("(no cuBLAS row can run here: the sweep needs it)\n");
    return false;
  }
  for (int n : {1024, 2048, 4096, 8192}) {
    RunConfig cfg = base;
    cfg.size = static_cast<std::uint64_t>(n);
    Problem p(cfg);
    const auto launch_cublas = [&](cudaStream_t s) {
      cublas->launch(p, s);
      CUDA_CHECK_LAST_LAUNCH();
    };
    std::vector<float> cublas_samples;
    double prev_rate = 0.0;
    const auto print_row = [&](const Variant<Problem>& v, double ms, double rate, double pct,
                               double p25, double p75, int pairs, bool passed,
                               const GpuState& start, const GpuState& end) {
      const double vs_prev = prev_rate > 0 && !v.is_ceiling ? rate / prev_rate : 0.0;
      char quartiles[32] = "-";
      if (pairs > 0) std::snprintf(quartiles, sizeof quartiles, "%.1f-%.1f%%", p25, p75);
      std::printf("%6d | %-40s | %10.3f | %9.2f | %8.1f%% | %13s | %7.2fx | %s\n", n,
                  v.name.c_str(), ms, rate / 1000.0, pct, quartiles, vs_prev,
                  passed ? "PASS" : "FAIL");
      json.add(SweepRow()
                   .integer("size", n)
                   .text("variant", v.key)
                   .num("median_ms", ms)
                   .num("gflops", rate)
                   .num("pct_of_cublas", pct)
                   .num("pct_p25", p25)
                   .num("pct_p75", p75)
                   .integer("pairs", pairs)
                   .integer("sm_mhz_start", start.sm_mhz)
                   .integer("sm_mhz_end", end.sm_mhz)
                   .num("power_w_start", start.power_w)
                   .num("power_w_end", end.power_w)
                   .passed(passed));
      if (!v.is_ceiling) prev_rate = rate;
    };
    for (const auto& v : all) {
      if (v.negative || v.perturb_negative || v.is_ceiling ||
          !why_variant_cannot_run(v, base.device).empty())
        continue;
      const bool passed = run_and_verify(p, v, stream).ok();
      ok = ok && passed;
      if (!passed) {  // a wrong kernel's time means nothing
        print_row(v, 0, 0, 0, 0, 0, 0, false, GpuState{}, GpuState{});
        continue;
      }
      idle_before_timing(stream);  // as the table does before each of its timed blocks
      const GpuState start = sample_gpu_state(base.device.pci_bus_id);
      const WatchdogScope named(v.key, "sweep: timed runs, in alternation with cuBLAS");
      const PairTiming pt = time_alternating(stream, base.warmup, kMinAlternatingPairs,
                                             [&](cudaStream_t s) {
                                               v.launch(p, s);
                                               CUDA_CHECK_LAST_LAUNCH();
                                             },
                                             launch_cublas);
      const GpuState end = sample_gpu_state(base.device.pci_bus_id);
      gpu_log.add(start);
      gpu_log.add(end);
      cublas_samples.insert(cublas_samples.end(), pt.b.samples_ms.begin(), pt.b.samples_ms.end());
      const RatioSummary ratio = summarize_ratios(pt.ratio);
      print_row(v, pt.a.median_ms, rate_per_second_1e9(p.work(), pt.a.median_ms),
                100.0 * ratio.median, 100.0 * ratio.p25, 100.0 * ratio.p75, ratio.pairs, true,
                start, end);
    }
    // cuBLAS's row: its result checked like every row's, its time the median of its samples.
    const bool cublas_passed = run_and_verify(p, *cublas, stream).ok();
    ok = ok && cublas_passed;
    if (cublas_samples.empty())
      cublas_samples = time_on_stream(stream, base.warmup, kMinAlternatingPairs, launch_cublas).samples_ms;
    const double cublas_ms = median(cublas_samples);
    print_row(*cublas, cublas_ms, rate_per_second_1e9(p.work(), cublas_ms), 100.0, 0, 0, 0,
              cublas_passed, GpuState{}, GpuState{});
  }
  std::printf("%s\n", gpu_log.summary().c_str());
  return write_sweep_json(json_path, json.str()) && ok;
}

}  // namespace tut
