/// @file main.cu
/// @brief Chapter 15's program: a single-precision GEMM built up one step at a time (naive ->
///        shared-memory tiles -> register tiles -> cp.async ring -> TMA ring), against cuBLAS.
///
/// What it does: the GEMM table at --size (default 4096), each step checked against the CPU
/// reference (or cuBLAS at large sizes) and timed, then a size sweep 1024..8192 that reports
/// TFLOP/s, % of cuBLAS and the speed-up of each step over the previous one
/// (tut::gemm_size_sweep, common/gemm_host.cuh), written beside --json as `<json>.sweep.json`.
/// Reading order: cuBLAS and the tensor maps, the CPU reference and its tolerance, the Problem,
/// the variant registry, main. The kernels are in kernels.cuh, the negative in broken.cuh.
/// Run:    build/bin/ch15_capstone_gemm [--size=4096] [--variant=v4_cp_async,cublas] [--list]
/// Tests include this file with TUTORIAL_CHAPTER_TEST defined, for the Problem and the registry.
#include <cublas_v2.h>
#include <cuda.h>  // CUtensorMap and the encoder's types (the encoder is fetched at run time)
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "common/bounded_wait.cuh"
#include "common/device_buffer.cuh"
#include "common/gemm_host.cuh"
#include "common/harness.cuh"
#include "broken.cuh"
#include "kernels.cuh"

namespace ch15 {

/// cuBLAS is column-major. A row-major [R x C] matrix with pitch ld is, to cuBLAS, the
/// column-major [C x R] matrix (its transpose) with leading dimension ld. So row-major
/// C = A * B is computed as the column-major C^T = B^T * A^T: swap the operands, pass
/// (n, m, k) - and no transpose flags.
inline void launch_cublas(cublasHandle_t handle, const GemmArgs& g, cudaStream_t s) {
  const float alpha = 1.0f, beta = 0.0f;
  CUBLAS_CHECK(cublasSetStream(handle, s));
  CUBLAS_CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, g.N, g.M, g.K, &alpha, g.B, g.ldb,
                           g.A, g.lda, &beta, g.C, g.ldc));
}

// ---------------------------------------------------------------------------------------------
// TMA descriptors (host), encoded by tut::make_2d_tensor_map (the driver's encoder is
// fetched at run time, so the binary does not link libcuda).
// ---------------------------------------------------------------------------------------------
/// A 2D fp32 tensor map over a row-major [rows x cols] matrix of pitch `ld` floats, read in
/// boxes of [box_rows x box_cols], without swizzle (v3's dense shared layout). Out-of-bounds
/// box elements are filled with zeros.
/// @note The pitch in bytes must be a multiple of 16 (TMA's rule) - hence the padded rows.
inline CUtensorMap make_tensor_map(const float* base, int rows, int cols, int ld, int box_rows,
                                   int box_cols) {
  return tut::make_2d_tensor_map(CU_TENSOR_MAP_DATA_TYPE_FLOAT32, base, rows, cols,
                                 static_cast<std::uint64_t>(ld) * sizeof(float), box_rows, box_cols,
                                 CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_128B);
}

// ---------------------------------------------------------------------------------------------
// CPU reference: double accumulation, rounded to float once at the end.
// ---------------------------------------------------------------------------------------------
inline std::vector<float> reference_gemm(const std::vector<float>& a, const std::vector<float>& b,
                                         int M, int N, int K, int lda, int ldb) {
  std::vector<float> c(static_cast<std::size_t>(M) * N);
  std::vector<double> row(static_cast<std::size_t>(N));
  for (int i = 0; i < M; ++i) {
    std::fill(row.begin(), row.end(), 0.0);
    for (int k = 0; k < K; ++k) {
      const double av = a[static_cast<std::size_t>(i) * lda + k];
      const float* brow = b.data() + static_cast<std::size_t>(k) * ldb;
      for (int j = 0; j < N; ++j) row[j] += av * brow[j];
    }
    for (int j = 0; j < N; ++j) c[static_cast<std::size_t>(i) * N + j] = static_cast<float>(row[j]);
  }
  return c;
}

/// The check sizes (M = N = K): one element; one short of, and just past, the 32 / 128 tiles;
/// a tile multiple; ragged. Laps: the rings of v4..v7 run over K inside each block, so a
/// block makes ceil(K / k-depth) / STAGES laps whatever the grid (the harness's lap check,
/// which caps persistent grids, changes nothing here). 517 gives 33 16-deep k tiles: 8 laps
/// of the 4-slot ring and 16 of the 2-slot one in every block; and 17 32-deep k tiles (the
/// last holds 5 k, the TMA zero-fills 27): 5 laps and 2 tiles of v7's 3-slot ring, 8 and 1
/// of the control's 2-slot one. At least the 3 a second-lap bug needs, in every ring.
inline std::vector<std::uint64_t> check_sizes() { return {1, 17, 129, 255, 384, 517}; }

/// Tolerance: |got - want| <= (K + 1) * 2^-20. The inputs lie in [-1, 1), so each of the K
/// fp32 rounding steps of an accumulation is off by at most 2^-24 of the partial sum, and with
/// random signs these errors add up like a random walk, to the order of K * 2^-24: the bound
/// leaves a factor of about 16 for any fp32 summation order. A wrong element is off by O(1).
/// TF32 inputs (10 explicit mantissa bits) are off by up to 2^-11 each, and that error grows
/// like sqrt(K) while the bound grows like K: TF32 is caught most easily at small K. The test
/// Ch15Tolerance.Tf32IsCaughtMostEasilyAtSmallK simulates it on the CPU.
inline double abs_tolerance(int K) { return (static_cast<double>(K) + 1.0) / double(1 << 20); }

// ---------------------------------------------------------------------------------------------
// The problem: A [M x K], B [K x N], C [M x N], row-major, padded pitches. The chapter runs
// square M = N = K = --size; the tests use any shape.
// ---------------------------------------------------------------------------------------------
using Shape = tut::GemmShape;  // M, N, K

struct Problem : tut::GemmProblem<float> {
  explicit Problem(const tut::RunConfig& cfg) : Problem(Shape::square(cfg), cfg.seed) {}

  Problem(Shape s, std::uint64_t seed)
      : GemmProblem(s.M, s.N, s.K, s.K, pitch_of(s.K), pitch_of(s.N), pitch_of(s.N)) {
    h_a = padded_fill(M, K, lda, seed);
    h_b = padded_fill(K, N, ldb, seed ^ 0x9E3779B97F4A7C15ull);
    d_a.upload(h_a);
    d_b.upload(h_b);
    // No TF32: CUBLAS_DEFAULT_MATH keeps cublasSgemm on fp32 FFMA kernels (TF32 tensor cores
    // would need CUBLAS_TF32_TENSOR_OP_MATH).
    CUBLAS_CHECK(cublasSetMathMode(blas, CUBLAS_DEFAULT_MATH));
    abs_tol = abs_tolerance(K);  // rel_tol stays 0
    if (static_cast<double>(M) * N * K <= tut::kCpuReferenceMaxMacs) {
      want = reference_gemm(h_a, h_b, M, N, K, lda, ldb);
      oracle = "CPU fp64";
    } else {  // once per Problem: cuBLAS's answer is the reference at large sizes
      launch_cublas(blas, args(), nullptr);
      CUDA_CHECK(cudaDeviceSynchronize());
      want = compact(d_c.download(nullptr));
      oracle = "cuBLAS";
    }
  }
  std::string describe() const { return shape_text() + " fp32 (" + oracle + " reference)"; }

  struct TensorMaps {
    CUtensorMap a, b;  // A [M x K] in boxes [BM x k-depth], B [K x N] in [k-depth x BN]
  };
  /// The TMA descriptors for stages of k-depth `kdepth` (boxes A [BM x kdepth], B [kdepth x
  /// BN]; v5 and v6: BK, v7: V7_KDEPTH), encoded on first use (they hold the buffers'
  /// addresses).
  const TensorMaps& tensor_maps(int kdepth) {
    auto it = tmaps.find(kdepth);
    if (it == tmaps.end())
      it = tmaps.emplace(kdepth, TensorMaps{make_tensor_map(d_a.data(), M, K, lda, BM, kdepth),
                                            make_tensor_map(d_b.data(), K, N, ldb, kdepth, BN)})
               .first;
    return it->second;
  }

  /// Row-major [rows x cols] of values in [-1, 1) on a 2^-19 grid, unique within each 2^20
  /// window, in rows of pitch `ld`; the padding columns hold NaN.
  static std::vector<float> padded_fill(int rows, int cols, int ld, std::uint64_t seed) {
    std::vector<float> dense(static_cast<std::size_t>(rows) * cols);
    tut::fill_unique_exact_floats(dense.data(), dense.size(), seed);
    std::vector<float> out(static_cast<std::size_t>(rows) * ld,
                           std::numeric_limits<float>::quiet_NaN());
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c)
        out[static_cast<std::size_t>(r) * ld + c] =
            dense[static_cast<std::size_t>(r) * cols + c] * (1.0f / 512.0f);
    return out;
  }

  std::vector<float> h_a, h_b;
  std::map<int, TensorMaps> tmaps;  // by k-depth of the box
};



// ---------------------------------------------------------------------------------------------
// The variant registry
// ---------------------------------------------------------------------------------------------
inline std::vector<tut::Variant<Problem>> variants() {
  tut::VariantList<Problem> v;
  v.add("v1_naive", "v1 naive", "one thread per C element, operands from global",
        [](Problem& p, cudaStream_t s) { launch_gemm_v1(p.args(), s); });
  v.add("v2_smem", "v2 smem tiles 32x32", "32x32 tiles staged LDG->STS, BAR.SYNC",
        [](Problem& p, cudaStream_t s) { launch_gemm_v2(p.args(), s); });
  v.add("v3_register", "v3 register 8x8, sync",
        "128x128x16 block tile, 8x8 per thread, synchronous loads",
        [](Problem& p, cudaStream_t s) { launch_gemm_v3(p.args(), s); });
  v.add("v4_cp_async_s2", "v4 register + cp.async 2-stage",
        "v3 double-buffered: one tile in flight while one is computed",
        [](Problem& p, cudaStream_t s) { launch_gemm_v4<2>(p.args(), s); });
  v.add("v4_cp_async", "v4 register + cp.async 4-stage",
        "v3 fed by a 4-stage cp.async.cg 16 B ring, zero-fill at the edges",
        [](Problem& p, cudaStream_t s) { launch_gemm_v4<STAGES>(p.args(), s); });
  v.add("v5_tma", "v5 register + TMA 4-stage",
        "v3 fed by 2D TMA boxes through a 4-slot mbarrier ring (sm_90)",
        [](Problem& p, cudaStream_t s) { launch_gemm_v5<STAGES, BK>(p, s); })
      .min_cc = 90;
  v.add("v6_empty_ring", "v6 TMA 4-stage, empty barriers",
        "v5 with an empty mbarrier per slot (one arrive per warp) instead of a block barrier "
        "per k-tile; thread 0 refills one k-tile late (sm_90)",
        [](Problem& p, cudaStream_t s) {
          const auto& maps = p.tensor_maps(BK);
          launch_gemm_v6(maps.a, maps.b, p.args(), s);
        })
      .min_cc = 90;
  v.add("v7_tma_bk32", "v7 TMA 3-stage, 32-deep k-tiles",
        "v5's kernel with 32-deep k-tiles, 3 slots of 32 KiB: half the barriers per FLOP (sm_90)",
        [](Problem& p, cudaStream_t s) { launch_gemm_v5<V7_STAGES, V7_KDEPTH>(p, s); })
      .min_cc = 90;
  // The control: v5's 64 KiB of ring per block, as 2 slots of 32-deep k-tiles.
  v.add("v7_tma_bk32_s2", "v7 TMA 2-stage, 32-deep (control)",
        "v7 with 2 slots: v5's ring size in 32-deep k-tiles (sm_90)",
        [](Problem& p, cudaStream_t s) { launch_gemm_v5<2, V7_KDEPTH>(p, s); })
      .min_cc = 90;
  v.add("cublas", "cuBLAS SGEMM (TF32 off)", "cublasSgemm, CUBLAS_DEFAULT_MATH: the ceiling",
        [](Problem& p, cudaStream_t s) { launch_cublas(p.blas, p.args(), s); })
      .is_ceiling = true;
  add_negatives(v);
  return v.list;
}

// The chapter main() hands to tut::run_chapter(): name, heading, registry, sizes, options.
// The point (the tour's pair): the same register-blocked kernel fed by TMA against it fed
// synchronously.
inline tut::Chapter<Problem> chapter() {
  tut::Chapter<Problem> ch("ch15_capstone_gemm", variants(), "v5_tma", "v3_register",
      "Chapter 15: capstone SGEMM, naive -> tiles -> registers -> cp.async -> TMA, vs cuBLAS");
  tut::set_square_gemm_sizes(ch, 3, 4);  // A, B, C in fp32
  // Why these sizes, and how the largest makes every ring wrap: check_sizes() above.
  ch.check_sizes = check_sizes();
  ch.after_table = [](const tut::RunConfig& base, cudaStream_t s, const std::string& json) {
    return tut::gemm_size_sweep(base, s, json, "ch15_capstone_gemm", variants());
  };
  return ch;
}

}

// A test includes this file with TUTORIAL_CHAPTER_TEST defined, for the Problem and the registry.
#ifndef TUTORIAL_CHAPTER_TEST
int main(int argc, char** argv) { return tut::run_chapter(argc, argv, ch15::chapter()); }
#endif  // TUTORIAL_CHAPTER_TEST
