/// @file main.cu
/// @brief Chapter 16: a BF16 GEMM on Hopper tensor cores in eight steps, against cuBLAS.
///
/// What the program does: it builds one GEMM problem at --size (default 4096; seeded bf16
/// inputs, a poisoned bf16 output), runs the ladder of kernels.cuh - mma.sync -> wgmma + TMA ->
/// warp specialization -> cluster multicast -> persistent with a TMA-store epilogue - and
/// cuBLAS on the same buffers, checks each against the CPU fp64 reference (cuBLAS above
/// tut::kCpuReferenceMaxMacs) within the error bound derived below, times it, and then (unless
/// --sweep=0) runs a size sweep 1024..8192 written beside --json (tut::gemm_size_sweep,
/// common/gemm_host.cuh: chapter 15's sweep, so both ladders plot side by side).
/// Reading order: the problem and its reference, cuBLAS and the tensor maps, the variant
/// registry, the timeline, main. Tests include this file with TUTORIAL_CHAPTER_TEST defined.
#include <cublas_v2.h>
#include <cuda.h>
#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "broken.cuh"
#include "common/bounded_wait.cuh"
#include "common/device_buffer.cuh"
#include "common/gemm_host.cuh"
#include "common/harness.cuh"
#include "common/timeline_run.cuh"
#include "kernels.cuh"

namespace ch16 {

/// Row pitch in elements: a multiple of 8 bf16 = 16 bytes, TMA's rule for global strides.
inline int pitch_of(int cols) { return (cols + 7) / 8 * 8; }

// ---------------------------------------------------------------------------------------------
// Error bound (README, "How exact is the check"). Products of two bf16 values are exact in
// fp32 (8 + 8 significant bits); only the K-term accumulation rounds. Any fp32 summation
// order, with rounding or truncation (unit u = 2^-23), gives |acc - exact| <= gamma_K * S,
// gamma_K = K u / (1 - K u), S = sum_k |a_k b_k| <= ||a_row||_2 ||b_row||_2 (Cauchy-Schwarz).
// The bf16 output then adds at most 2^-8 |acc|. So |got - exact| <= bound (1 + 2^-8) +
// 2^-8 |exact|, with bound = gamma_K * max ||a_row|| * max ||b_row||.
// ---------------------------------------------------------------------------------------------
inline double accumulation_bound(int K, double max_norm_a, double max_norm_b) {
  const double ku = static_cast<double>(K) * std::ldexp(1.0, -23);
  return ku / (1.0 - ku) * max_norm_a * max_norm_b;
}

/// C = A * B^T in fp64 from the exact bf16 values (as floats), rounded to float at the end.
inline std::vector<float> reference_gemm(const std::vector<float>& a, const std::vector<float>& b,
                                         int M, int N, int K, int lda, int ldb) {
  std::vector<float> c(static_cast<std::size_t>(M) * N);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      const float* ar = a.data() + static_cast<std::size_t>(i) * lda;
      const float* br = b.data() + static_cast<std::size_t>(j) * ldb;
      double sum = 0.0;
      for (int k = 0; k < K; ++k) sum += static_cast<double>(ar[k]) * br[k];
      c[static_cast<std::size_t>(i) * N + j] = static_cast<float>(sum);
    }
  return c;
}

// ---------------------------------------------------------------------------------------------
// cuBLAS and the tensor maps
// ---------------------------------------------------------------------------------------------
/// cuBLAS is column-major: our row-major C[M x N] is its C^T [N x M] (ldc), our A[M x K] its
/// A^T [K x M] (lda), our B[N x K] its B^T [K x N] (ldb). C^T = B * A^T: the first operand
/// transposed, the second not - "TN", the layout in which both operands are K-major.
inline void launch_cublas(cublasHandle_t handle, const GemmArgs& g, bf16* c, cudaStream_t s) {
  const float alpha = 1.0f, beta = 0.0f;
  CUBLAS_CHECK(cublasSetStream(handle, s));
  CUBLAS_CHECK(cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, g.N, g.M, g.K, &alpha, g.B,
                            CUDA_R_16BF, g.ldb, g.A, CUDA_R_16BF, g.lda, &beta, c, CUDA_R_16BF,
                            g.ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

/// A 2D bf16 map over a row-major [rows x cols] matrix of pitch `ld`, in boxes of
/// [box_rows x 64]: 64 bf16 = 128 bytes per box row, written to shared memory with the
/// 128-byte swizzle the wgmma descriptors (and the epilogue's staging) assume. Elements
/// outside [rows x cols] are read as zeros and never written.
inline CUtensorMap make_map(const bf16* base, int rows, int cols, int ld, int box_rows) {
  return tut::make_2d_tensor_map(CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, base, rows, cols,
                                 static_cast<std::uint64_t>(ld) * sizeof(bf16), box_rows, 64,
                                 CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
}

// ---------------------------------------------------------------------------------------------
// The problem
// ---------------------------------------------------------------------------------------------
struct Shape {
  int M, N, K;
};

struct Problem : tut::GemmProblem<bf16> {
  explicit Problem(const tut::RunConfig& cfg)
      : Problem(Shape{static_cast<int>(cfg.size), static_cast<int>(cfg.size),
                      static_cast<int>(cfg.size)},
                cfg.seed, cfg.device.sm_count) {}

  Problem(Shape s, std::uint64_t seed, int sms)
      : GemmProblem(s.M, s.N, s.K, s.N, pitch_of(s.K), pitch_of(s.K), pitch_of(s.N)),
        sm_count(sms) {
    std::vector<float> fa, fb;
    const double norm_a = fill(d_a, fa, M, K, lda, seed);
    const double norm_b = fill(d_b, fb, N, K, ldb, seed ^ 0x9E3779B97F4A7C15ull);
    bound = accumulation_bound(K, norm_a, norm_b);
    if (static_cast<double>(M) * N * K <= tut::kCpuReferenceMaxMacs) {
      want = reference_gemm(fa, fb, M, N, K, lda, ldb);
      oracle = "CPU fp64";
      abs_tol = bound * (1.0 + std::ldexp(1.0, -8));
      rel_tol = std::ldexp(1.0, -8);
    } else {  // cuBLAS's answer, once per problem: both sides carry the bound
      tut::DeviceBuffer<bf16> d_ref(static_cast<std::size_t>(M) * ldc);
      launch_cublas(blas, args(), d_ref.data(), nullptr);
      CUDA_CHECK(cudaDeviceSynchronize());
      want = compact(d_ref.download(nullptr));
      oracle = "cuBLAS";
      abs_tol = 2.1 * bound;
      rel_tol = std::ldexp(1.0, -7) + std::ldexp(1.0, -14);
    }
    map_a64 = make_map(d_a.data(), M, K, lda, 64);
    map_a128 = make_map(d_a.data(), M, K, lda, 128);
    map_b256 = make_map(d_b.data(), N, K, ldb, 256);
    map_b128 = make_map(d_b.data(), N, K, ldb, 128);
    map_c64 = make_map(d_c.data(), M, N, ldc, 64);
  }
  std::string describe() const {
    return shape_text() + " bf16 in, fp32 accumulate, bf16 out (" + oracle + " reference)";
  }

  /// Seeded values in [-1, 1) rounded to bf16 (8 significant bits), rows of pitch `ld` whose
  /// padding holds NaN (a kernel that reads it cannot pass). Returns the largest row 2-norm.
  static double fill(tut::DeviceBuffer<bf16>& dev, std::vector<float>& exact, int rows, int cols,
                     int ld, std::uint64_t seed) {
    std::vector<bf16> host(static_cast<std::size_t>(rows) * ld, __float2bfloat16(NAN));
    exact.assign(host.size(), NAN);
    std::uint64_t x = seed;
    double max_norm = 0.0;
    for (int r = 0; r < rows; ++r) {
      double norm2 = 0.0;
      for (int c = 0; c < cols; ++c) {
        x += 0x9E3779B97F4A7C15ull;  // splitmix64
        std::uint64_t z = x;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        const float v = static_cast<float>(static_cast<double>(z >> 40) * std::ldexp(1.0, -23) - 1.0);
        const std::size_t i = static_cast<std::size_t>(r) * ld + c;
        host[i] = __float2bfloat16_rn(v);
        exact[i] = __bfloat162float(host[i]);
        norm2 += static_cast<double>(exact[i]) * exact[i];
      }
      max_norm = std::max(max_norm, std::sqrt(norm2));
    }
    dev.upload(host);
    return max_norm;
  }

  int sm_count;
  double bound = 0.0;  ///< gamma_K * max ||a_row|| * max ||b_row|| (accumulation_bound)
  CUtensorMap map_a64{}, map_a128{}, map_b256{}, map_b128{}, map_c64{};
  step8::Workspace stream_k;  ///< step 8's partial tiles and flags (allocated at its first launch)
};

// ---------------------------------------------------------------------------------------------
// The variant registry, in reading order
// ---------------------------------------------------------------------------------------------
/// Step 6's rows: one launcher for every configuration of step6_levers.cuh.
template <class Levers>
void launch_step6(Problem& p, cudaStream_t s) {
  step6::launch<Levers>(p.map_a128, p.map_b128, p.map_c64, p.args(), p.sm_count, s);
}

inline std::vector<tut::Variant<Problem>> variants() {
  tut::VariantList<Problem> v;
  v.add("step1_mma_sync", "1 mma.sync + cp.async 4-stage",
        "128x128x32 tiles, 8 warps of mma.sync m16n8k16 fed by ldmatrix from a cp.async ring",
        [](Problem& p, cudaStream_t s) { step1::launch(p.args(), s); });
  v.add("step2_wgmma", "2 wgmma + TMA, 1 warpgroup",
        "64x256x64 tiles, wgmma m64n256k16 from 128-byte swizzled TMA tiles, 4 slots",
        [](Problem& p, cudaStream_t s) {
          step2::launch(p.map_a64, p.map_b256, p.args(), s);
        });
  v.add("step3_warp_specialized", "3 warp-specialized, 2 consumer WGs",
        "128x256x64 tiles, producer warp + 2 consumer warpgroups, full/empty ring, setmaxnreg",
        [](Problem& p, cudaStream_t s) {
          step3::launch(p.map_a128, p.map_b256, p.args(), s);
        });
  v.add("step4_cluster_multicast", "4 2-block cluster, B multicast",
        "step 3 in 2-block clusters: each block multicasts half of B, remote slot-free arrivals",
        [](Problem& p, cudaStream_t s) { step4::launch(p.map_a128, p.map_b128, p.args(), s); });
  v.add("step5_persistent_tma_store", "5 persistent, grouped, TMA store",
        "step 4 persistent over tile pairs in groups of 8, 3 slots, epilogue by TMA store",
        [](Problem& p, cudaStream_t s) {
          step5::launch(p.map_a128, p.map_b128, p.map_c64, p.args(), p.sm_count, s);
        });
  // Step 6: each lever of step6_levers.cuh alone on top of step 5, then all three.
  v.add("step6a_small_staging", "6a step 5 + 16 KiB staging by boxes",
        "step 5 staging and storing C box by box through 2 x 8 KiB per warpgroup", launch_step6<step6::SmallStaging>);
  v.add("step6b_four_stages", "6b 6a + a 4th ring stage",
        "6a's 16 KiB staging makes room for a 4-slot ring (4 x 48 + 2 x 16 KiB)", launch_step6<step6::FourStages>);
  v.add("step6c_warpgroup_release", "6c step 5 + 1 release per WG",
        "step 5 with one slot-free arrival per warpgroup and block (4, not 16)", launch_step6<step6::WarpgroupRelease>);
  v.add("step6_levers", "6 all levers (6a + 6b + 6c)",
        "16 KiB box staging, 4 ring slots, one release per warpgroup and block", launch_step6<step6::AllLevers>);
  // On top of step 6: one more switch per row.
  v.add("step6d_prefetch_maps", "6d 6 + prefetch.tensormap", "step 6 prefetching its 3 tensor maps during the barrier init", launch_step6<step6::PrefetchMaps>);
  v.add("step6e_group4", "6e 6 + raster groups of 4", "step 6 walking the tile pairs in groups of 4 pair-rows (not 8)", launch_step6<step6::GroupOf4>);
  v.add("step6f_group16", "6f 6 + raster groups of 16", "step 6 walking the tile pairs in groups of 16 pair-rows (not 8)", launch_step6<step6::GroupOf16>);
  v.add("step6g_evict_last_a", "6g 6 + A loads evict_last", "step 6 with an L2 evict_last policy on the TMA loads of A", launch_step6<step6::EvictLastA>);
  v.add("step6h_overlapped_epilogue", "6h 6 + epilogue under next MMAs",
        "step 6 storing each tile's 4 boxes while the next tile's first 4 k-tiles of MMAs run", launch_step6<step6::OverlapEpilogue>);
  v.add("step6i_exit_waits_read", "6i 6h + exit waits for store reads",
        "6h whose storing threads wait at exit only until the last TMA stores read shared memory", launch_step6<step6::ExitWaitsReadOnly>);
  v.add("step6j_exit_read_prefetch", "6j 6i + prefetch.tensormap",
        "6i with 6d's prefetch of the 3 tensor maps during the barrier init", launch_step6<step6::ExitReadAndPrefetch>);
  v.add("step6k_exit_on_drain", "6k 6i + no cluster barrier at exit",
        "6i whose producer drains the ring (every slot released in both blocks) instead of the exit's cluster barrier", launch_step6<step6::ExitOnDrain>);
  v.add("step6l_programmatic_launch", "6l 6k + programmatic dependent launch",
        "6k launched with PDL: the next GEMM in the stream is launched while this one runs and waits for it in its prologue", launch_step6<step6::ProgrammaticLaunch>);
  v.add("step7_small_tiles", "7a 128x128 tiles, 2 blocks/SM",
        "128x128x64 tiles, producer warp + 2 consumer WGs (wgmma m64n128k16), 3 slots",
        [](Problem& p, cudaStream_t s) { step7::launch_small_tiles(p.map_a128, p.map_b128, p.args(), s); });
  v.add("step7_split_k_cluster", "7b 128x128 split-K, DSMEM reduce",
        "7a in 2-block clusters: each block half of K, partials added via ld.shared::cluster",
        [](Problem& p, cudaStream_t s) { step7::launch_split_k(p.map_a128, p.map_b128, p.args(), s); });
  v.add("step7_bulk_handoff", "7d 7b + bulk DSMEM hand-off",
        "7b with each partial pushed by one cp.async.bulk into the peer's shared memory (mbarrier complete_tx)",
        [](Problem& p, cudaStream_t s) { step7::launch_bulk_handoff(p.map_a128, p.map_b128, p.args(), s); });
  v.add("step7_bulk_tma_store", "7e 7d + TMA-store epilogue",
        "7d with the reducer's 64x128 rows staged as two swizzled 64x64 bf16 boxes and stored by TMA",
        [](Problem& p, cudaStream_t s) { step7::launch_bulk_tma_store(p.map_a128, p.map_b128, p.map_c64, p.args(), s); });
  // 7f-7h: 7e's per-block fixed costs, one lever a row, each on top of the row before.
  v.add("step7f_prefetch_maps", "7f 7e + prefetch.tensormap",
        "7e with the producer warp prefetching the 3 tensor maps while thread 0 initialises the barriers",
        [](Problem& p, cudaStream_t s) { step7::launch_fixed_cost<step7::kPrefetchMaps>(p.map_a128, p.map_b128, p.map_c64, p.args(), s); });
  v.add("step7g_deferred_wait", "7g 7f + cluster wait deferred",
        "7f whose start arrives on the cluster barrier and waits only before the first hand-off",
        [](Problem& p, cudaStream_t s) { step7::launch_fixed_cost<step7::kPrefetchMaps | step7::kDeferClusterWait>(p.map_a128, p.map_b128, p.map_c64, p.args(), s); });
  v.add("step7h_exit_on_taken", "7h 7g + no cluster barrier at exit",
        "7g whose exit waits only for the last taken (the peer is done with my shared memory)",
        [](Problem& p, cudaStream_t s) { step7::launch_fixed_cost<step7::kPrefetchMaps | step7::kDeferClusterWait | step7::kExitOnTaken>(p.map_a128, p.map_b128, p.map_c64, p.args(), s); });
  v.add("step7i_st_async_handoff", "7i 7h + st.async hand-off",
        "7h whose exporter writes its partial straight into the peer's inbox by st.async (no outbox, no bulk copy)",
        [](Problem& p, cudaStream_t s) { step7::launch_fixed_cost<step7::kPrefetchMaps | step7::kDeferClusterWait | step7::kExitOnTaken | step7::kStAsyncHandoff>(p.map_a128, p.map_b128, p.map_c64, p.args(), s); });
  v.add("step7j_five_stages", "7j 7i + a 5th ring slot",
        "7i with the freed outbox's 32 KiB as a 5th slot: 5 of 8 k-tiles issued before the first wait",
        [](Problem& p, cudaStream_t s) { step7::launch_fixed_cost<step7::kStep7jLevers>(p.map_a128, p.map_b128, p.map_c64, p.args(), s); });
  v.add("step7k_programmatic_launch", "7k 7j + programmatic dependent launch",
        "7j launched with PDL: the next GEMM in the stream is launched while this one runs and waits for it in its prologue",
        [](Problem& p, cudaStream_t s) { step7::launch_fixed_cost<step7::kStep7kLevers>(p.map_a128, p.map_b128, p.map_c64, p.args(), s); });
  v.add("step7_size_dispatched", "7c size-dispatched (7a / 7k / 6l)",
        "step7::choose_schedule on tile counts against SMs: "
        "step 6l if its tiles fill 7/8 of the SMs, else 7k or 7a",
        [](Problem& p, cudaStream_t s) { step7::launch_dispatched(p.map_a128, p.map_b128, p.map_c64, p.args(), p.sm_count, s); });
  v.add("step8_stream_k", "8 6i + stream-K last wave",
        "6i's full rounds of tile pairs, then the last partial round's k-tiles split evenly over "
        "every cluster, partial sums added through global memory",
        [](Problem& p, cudaStream_t s) {
          step8::launch<false>(p.map_a128, p.map_b128, p.map_c64, p.args(), p.sm_count, p.stream_k, s);
        });
  v.add("step8b_last_tile_in_ring", "8b 8 + last tile staged in the ring",
        "step 8 staging each block's last tile whole in the freed ring: 4 boxes, 1 fence, 4 TMA stores",
        [](Problem& p, cudaStream_t s) {
          step8::launch<true>(p.map_a128, p.map_b128, p.map_c64, p.args(), p.sm_count, p.stream_k, s);
        });
  v.add("cublas", "cuBLAS GemmEx TN (bf16, fp32 acc)",
        "cublasGemmEx, CUBLAS_COMPUTE_32F, same buffers: the ceiling",
        [](Problem& p, cudaStream_t s) { launch_cublas(p.blas, p.args(), p.d_c.data(), s); })
      .is_ceiling = true;
  add_negatives(v);
  return v.list;
}

// --timeline: step 3 traced on a 2048^3 problem (--size caps it lower; 128 output tiles of
// 128 x 256: one wave, one block per SM, each block 32 stages of K, 8 laps of the 4-slot
// ring), blocks 0 and 1 wherever they run. The traced run is checked like any other run.
inline bool record_timeline(const tut::RunConfig& base, cudaStream_t stream,
                            const std::string& path) {
  const tut::RunConfig cfg = tut::timeline_config(base, 2048);
  Problem p(cfg);
  tut::TraceRecorder rec({2, 3, 256}, 0);  // blocks 0 and 1, 3 lanes, 256 events per lane
  std::vector<tut::KernelTrace> traces;
  const bool ok = tut::trace_checked_run(
      p, 0, stream, rec,
      {"step3_warp_specialized", "3 warp-specialized, 2 consumer WGs",
       {"producer (elected lane)", "consumer warpgroup 1", "consumer warpgroup 2"}, {}},
      traces, [&](cudaStream_t s, auto trace) {
        step3::launch_kernel(step3::gemm_step3_warp_specialized_kernel<decltype(trace)>,
                             p.map_a128, p.map_b256, p.args(), s, trace);
      });
  return ok && tut::write_chapter_timeline(path, traces, cfg, "ch16_tensor_core_gemm");
}

// The chapter main() hands to tut::run_chapter(): name, heading, registry, sizes, options.
// The tour's pair: the last step (persistent, TMA store) against the first (mma.sync).
inline tut::Chapter<Problem> chapter() {
  tut::Chapter<Problem> ch("ch16_tensor_core_gemm", variants(),
      "step5_persistent_tma_store", "step1_mma_sync",
      "Chapter 16: BF16 GEMM on Hopper tensor cores, mma.sync -> wgmma+TMA -> warp "
      "specialization -> cluster multicast -> persistent, vs cuBLAS");
  ch.min_cc_major = 9;
  // wgmma (steps 2-5) and the multicast tensor copy exist only in sm_90a code, and an sm_120a
  // build of gemm_common.cuh does not compile at all: the whole chapter runs from an sm_90a
  // image only, and any other image skips it, naming sm_90a (docs/arch-matrix.md).
  ch.arch_specific = {90};
  tut::set_square_gemm_sizes(ch, 4, 2);  // A, B, C and cuBLAS's C in bf16
  // One element; ragged below one tile; exact multiples of every tile; ragged, several tiles
  // per block. At 517 (K-loop of 9 stages of 64, 17 of 32), the lap check's two blocks each
  // walk >= 7 tiles: the 3- and 4-slot rings wrap around more than 15 times.
  ch.check_sizes = {1, 77, 256, 517};
  ch.extra_options = {{"sweep", "1: run the 1024..8192 size sweep after the table, 0: skip it", 1, 0, 1}};
  ch.after_table = [](const tut::RunConfig& base, cudaStream_t s, const std::string& json) {
    return base.extra("sweep") == 0 ||
           tut::gemm_size_sweep(base, s, json, "ch16_tensor_core_gemm", variants());
  };
  ch.timeline = record_timeline;  // --timeline: step 3 traced at 2048^3 (or --size, if less)
  return ch;
}

}

// A test includes this file with TUTORIAL_CHAPTER_TEST defined, for the Problem and the registry.
#ifndef TUTORIAL_CHAPTER_TEST
int main(int argc, char** argv) { return tut::run_chapter(argc, argv, ch16::chapter()); }
#endif  // TUTORIAL_CHAPTER_TEST
