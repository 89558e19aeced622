// The harness's own guards, tested with a tiny fake chapter: the shared-memory scrub (a kernel
// that reads a tile it never copied fails even when the previous variant left that very tile in
// shared memory), the arch probe, the lap-check arithmetic, the watchdog (a kernel that never
// finishes ends the run with exit 1 and one line naming it), the perturbation negatives'
// registry flag, and the perturbation build's delays. The GPU tests skip without a GPU.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "common/bounded_wait.cuh"
#include "common/device_buffer.cuh"
#include "common/harness.cuh"
#include "common/perturb.cuh"
#include "gpu_test.cuh"

namespace {

constexpr unsigned kTileWords = 1024;  // one 4 KiB tile, the whole input

// Every block copies the whole input into its shared memory; block 0 writes it out. Launched on
// many blocks, so afterwards every SM holds the right tile in shared memory.
__global__ void copy_through_shared(const std::uint32_t* in, std::uint32_t* out) {
  __shared__ std::uint32_t tile[kTileWords];
  for (unsigned i = threadIdx.x; i < kTileWords; i += blockDim.x) tile[i] = in[i];
  __syncthreads();
  if (blockIdx.x == 0)
    for (unsigned i = threadIdx.x; i < kTileWords; i += blockDim.x) out[i] = tile[i];
}

// The same kernel with its copy into shared memory dropped: it writes out whatever shared
// memory holds.
__global__ void forgets_the_copy(const std::uint32_t* in, std::uint32_t* out) {
  __shared__ std::uint32_t tile[kTileWords];
  (void)in;  // BUG: the copy in -> tile is missing
  __syncthreads();
  if (blockIdx.x == 0)
    for (unsigned i = threadIdx.x; i < kTileWords; i += blockDim.x) out[i] = tile[i];
}

}  // namespace

// The smallest Problem the harness accepts: out must equal in.
struct CopyProblem {
  explicit CopyProblem(const tut::RunConfig& cfg) : in(kTileWords), out(kTileWords), want(kTileWords) {
    tut::fill_unique_words(want.data(), want.size(), cfg.seed);
    in.upload(want);
  }
  void poison(cudaStream_t s) { out.poison(s); }
  tut::VerifyResult verify(cudaStream_t s, int) {
    std::vector<std::uint32_t> got(kTileWords);
    CUDA_CHECK(cudaMemcpyAsync(got.data(), out.data(), out.bytes(), cudaMemcpyDeviceToHost, s));
    CUDA_CHECK(cudaStreamSynchronize(s));
    return tut::compare_exact_words(got.data(), want.data(), got.size());
  }
  double work() const { return 2.0 * in.bytes(); }
  std::string describe() const { return "4 KiB"; }

  tut::DeviceBuffer<std::uint32_t> in, out;
  std::vector<std::uint32_t> want;
};

namespace {

std::vector<tut::Variant<CopyProblem>> variants(int sm_count) {
  tut::VariantList<CopyProblem> v;
  v.add("copy", "copy through shared memory", "", [sm_count](CopyProblem& p, cudaStream_t s) {
    copy_through_shared<<<4 * sm_count, 256, 0, s>>>(p.in.data(), p.out.data());
  });
  v.add("forgets_copy", "BUG: never fills shared memory", "", [](CopyProblem& p, cudaStream_t s) {
    forgets_the_copy<<<1, 256, 0, s>>>(p.in.data(), p.out.data());
  }).negative = true;
  return v.list;
}

}  // namespace

TEST(SharedMemoryScrub, KernelThatNeverFillsSharedMemoryFailsAfterACorrectOne) {
  SKIP_UNLESS_GPU(8, 0);
  tut::RunConfig cfg;
  cfg.seed = 12;
  cfg.device = tut::query_device();
  const auto list = variants(cfg.device.sm_count);
  CopyProblem p(cfg);

  // Without the scrub: the stale tile is (usually) still there, so the broken kernel may pass.
  // This is why the scrub exists; it is printed, not asserted, since it depends on placement.
  for (int round = 0; round < 2; ++round) {
    p.poison(nullptr);
    list[round].launch(p, nullptr);
    CUDA_CHECK(cudaStreamSynchronize(nullptr));
  }
  const bool passed_unscrubbed = p.verify(nullptr, 0).ok();
  std::printf("without the scrub the broken kernel %s\n",
              passed_unscrubbed ? "PASSED on the previous kernel's tile" : "failed");

  // With the scrub (what the harness does before every checked launch) it must fail, every time.
  for (int round = 0; round < 5; ++round) {
    EXPECT_TRUE(tut::run_and_verify(p, list[0], nullptr).ok());
    const tut::VerifyResult r = tut::run_and_verify(p, list[1], nullptr);
    EXPECT_FALSE(r.ok()) << "round " << round << ": " << r.summary();
    EXPECT_EQ(r.mismatches, kTileWords) << "every word must be the poison, round " << round;
  }
}

TEST(ArchProbe, ReportsTheLoadedImage) {
  SKIP_UNLESS_GPU(8, 0);
  const tut::LoadedImage li = tut::loaded_image();
  ASSERT_TRUE(li.present) << li.error;
  EXPECT_GE(li.ptx_arch, 80);
  EXPECT_GE(li.binary_arch, li.ptx_arch);
  EXPECT_EQ(tut::missing_arch_reason(li.ptx_arch), "");
  const std::string why = tut::missing_arch_reason(li.ptx_arch + 10);
  EXPECT_NE(why.find("rebuild with -DCMAKE_CUDA_ARCHITECTURES="), std::string::npos) << why;
}

// The gate functions are pure: what --gates prints for a target is what a run from that
// target's image decides. No GPU needed.
TEST(ArchGates, ArchSpecificVariantsRunOnlyFromTheirImage) {
  const tut::LoadedImage sm90a = tut::image_for_target("90a");
  const tut::LoadedImage sm120a = tut::image_for_target("120a");
  const tut::LoadedImage sm80 = tut::image_for_target("80");
  ASSERT_TRUE(sm90a.present && sm90a.arch_specific && sm90a.ptx_arch == 90);
  ASSERT_TRUE(sm80.present && !sm80.arch_specific && sm80.ptx_arch == 80);
  EXPECT_FALSE(tut::image_for_target("sm_90").present);
  EXPECT_EQ(tut::missing_code_reason(sm90a, 90, {90}), "");
  EXPECT_EQ(tut::missing_code_reason(sm120a, 90), "");  // plain sm_90 features: any newer image
  const std::string why = tut::missing_code_reason(sm120a, 90, {90});
  EXPECT_NE(why.find("needs code compiled for sm_90a"), std::string::npos) << why;
  EXPECT_NE(why.find("runs sm_120a code"), std::string::npos) << why;
  EXPECT_NE(tut::missing_code_reason(sm80, 90).find("no sm_90 code"), std::string::npos);

  struct P {};
  tut::Variant<P> wgmma;
  wgmma.min_cc = 90;
  wgmma.arch_specific = {90};
  EXPECT_EQ(tut::why_variant_cannot_run_on(wgmma, 90, sm90a), "");
  EXPECT_NE(tut::why_variant_cannot_run_on(wgmma, 120, sm120a), "");
  EXPECT_NE(tut::why_variant_cannot_run_on(wgmma, 80, sm80).find("needs compute capability 9.0"),
            std::string::npos);

  tut::Chapter<P> ch;
  ch.id = "chXX";
  ch.min_cc_major = 9;
  ch.variants = {wgmma, tut::Variant<P>{}};
  ch.variants[1].key = "plain";
  ch.variants[0].key = "wgmma";
  const std::string json = tut::detail::gates_json(ch, {"90a", "120a"});
  EXPECT_NE(json.find("\"key\": \"plain\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"120a\": \"skip: needs code compiled for sm_90a"), std::string::npos)
      << json;
  EXPECT_NE(json.find("\"90a\": \"runs\", \"120a\": \"runs\""), std::string::npos) << json;
}

TEST(LapCheck, LapsPerBlockCountsCompleteLapsOfTheLeastLoadedBlock) {
  EXPECT_EQ(tut::laps_per_block(48, 2, 8), 3u);   // 24 tiles per block, 8 stages
  EXPECT_EQ(tut::laps_per_block(47, 2, 8), 2u);   // the least-loaded block has 23
  EXPECT_EQ(tut::laps_per_block(1000, 0, 4), 0u);
  EXPECT_EQ(tut::laps_per_block(1000, 4, 0), 0u);
}

TEST(LapCheck, GridCapAppliesInsideItsScopeOnly) {
  EXPECT_EQ(tut::apply_grid_cap(264), 264u);
  {
    const tut::ScopedGridCap cap(tut::kLapCheckBlocks);
    EXPECT_EQ(tut::apply_grid_cap(264), 2u);
    EXPECT_EQ(tut::apply_grid_cap(1), 1u);
    EXPECT_EQ(tut::apply_grid_cap(264, 4), 4u);  // a cluster of 4 is never split
  }
  EXPECT_EQ(tut::apply_grid_cap(264), 264u);
}

// --- The watchdog (common/watchdog.cuh) --------------------------------------------------------

namespace {

// Nothing ever sets it: a kernel waiting for it is a wait that never completes, like a
// cuda::pipeline wait whose producer never commits, or an unbounded mbarrier loop.
__device__ unsigned g_never_set = 0;

__global__ void spins_forever(std::uint32_t* out) {
  while (*static_cast<volatile unsigned*>(&g_never_set) == 0) {
  }
  out[threadIdx.x] = 0;
}

std::vector<tut::Variant<CopyProblem>> spinning_variants() {
  tut::VariantList<CopyProblem> v;
  v.add("copy", "copy through shared memory", "", [](CopyProblem& p, cudaStream_t s) {
    copy_through_shared<<<1, 256, 0, s>>>(p.in.data(), p.out.data());
  });
  v.add("spins", "BUG: waits for a flag nobody sets", "", [](CopyProblem& p, cudaStream_t s) {
    spins_forever<<<1, 32, 0, s>>>(p.out.data());
  }).negative = true;
  v.add("races", "BUG (perturbation only)", "", [](CopyProblem& p, cudaStream_t s) {
    copy_through_shared<<<1, 256, 0, s>>>(p.in.data(), p.out.data());
  }).perturb_negative = true;
  return v.list;
}

// A fake chapter around CopyProblem: one 4 KiB tile, one check size.
tut::Chapter<CopyProblem> fake_chapter() {
  tut::Chapter<CopyProblem> ch;
  ch.id = "test_watchdog";
  ch.title = "the harness's watchdog, on a kernel that spins forever";
  ch.size_help = "bytes (the problem is always one 4 KiB tile)";
  ch.default_size = [](const tut::DeviceSummary&) { return std::uint64_t{4096}; };
  ch.check_sizes = {4096};
  ch.device_bytes = [](std::uint64_t) { return std::uint64_t{1} << 20; };
  ch.variants = spinning_variants();
  return ch;
}

int run_fake_chapter(std::vector<std::string> args) {
  args.insert(args.begin(), "test_watchdog");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  return tut::run_chapter(static_cast<int>(argv.size()), argv.data(), fake_chapter());
}

}  // namespace

// In a child process (a death test: the spinning kernel's context cannot be recovered, only torn
// down when the process ends): the run must end within the limit plus start-up, with exit 1 and
// the one line naming the chapter, the variant and what it was doing.
TEST(Watchdog, AKernelThatNeverFinishesEndsTheRunWithExit1AndOneLineNamingIt) {
  SKIP_UNLESS_GPU(8, 0);
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // the child starts afresh, CUDA included
  EXPECT_EXIT(
      {
        setenv("TUTORIAL_WATCHDOG_S", "2", 1);
        std::thread([] {  // if the watchdog never fires, the child must not hang the suite
          std::this_thread::sleep_for(std::chrono::seconds(60));
          std::fprintf(stderr, "the watchdog did not fire within 60 s\n");
          std::_Exit(3);
        }).detach();
        std::exit(run_fake_chapter({"--variant=spins", "--check-only", "--seed=3"}));
      },
      ::testing::ExitedWithCode(1),
      "test_watchdog: variant spins did not finish within 2 s .checked launch, size 4096.: a wait "
      "that never completes .inside cuda::pipeline, or an unbounded mbarrier wait.; exit 1");
}

// The same run with a correct kernel is not touched by the watchdog.
TEST(Watchdog, ACorrectRunPassesUnderTheWatchdog) {
  SKIP_UNLESS_GPU(8, 0);
  EXPECT_EQ(run_fake_chapter({"--variant=copy", "--check-only", "--seed=3"}), 0);
}

// --- Perturbation negatives (Variant::perturb_negative) -----------------------------------------

TEST(PerturbNegatives, RunOnlyWhenAskedForAndListedWithTheirOwnMarker) {
  const tut::Chapter<CopyProblem> ch = fake_chapter();
  auto keys = [&](const std::string& spec) {
    std::string error;
    std::string joined;
    for (std::size_t i : tut::detail::select_variants(ch, spec, error))
      joined += (joined.empty() ? "" : ",") + ch.variants[i].key;
    return joined;
  };
  EXPECT_EQ(keys("all"), "copy");
  EXPECT_EQ(keys("negative"), "spins");            // cmake/check_negatives.cmake's set
  EXPECT_EQ(keys("perturb-negative"), "races");    // the perturb label's set
  EXPECT_EQ(keys("races,copy"), "races,copy");     // by key, in any build

  testing::internal::CaptureStdout();
  EXPECT_EQ(run_fake_chapter({"--list"}), 0);
  const std::string listing = "\n" + testing::internal::GetCapturedStdout();
  auto line_of = [&](const std::string& key) {
    const std::size_t at = listing.find("\n" + key + " ");
    if (at == std::string::npos) return std::string();
    return listing.substr(at + 1, listing.find('\n', at + 1) - at - 1);
  };
  EXPECT_NE(line_of("spins").find("[negative: must FAIL]"), std::string::npos) << listing;
  EXPECT_NE(line_of("races").find("[perturb negative: must FAIL in a TUTORIAL_PERTURB build]"),
            std::string::npos)
      << listing;
  // cmake/check_negatives.cmake's pattern for plain negatives must not pick it up
  EXPECT_EQ(line_of("races").find("[negative"), std::string::npos) << listing;
  EXPECT_EQ(line_of("copy").find("must FAIL"), std::string::npos) << listing;
}

// --- The perturbation build's delays (common/perturb.cuh) ---------------------------------------

#if defined(TUTORIAL_PERTURB)
namespace {

constexpr unsigned kPerturbIterations = 8;

// Each warp times each of its perturbation points with %globaltimer.
__global__ void time_perturbation_points(unsigned long long* delay_ns) {
  const unsigned warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  for (unsigned it = 0; it < kPerturbIterations; ++it) {
    const unsigned long long before = tut::globaltimer_ns();
    tut::perturb(tut::Perturb::kBeforeRelease, it);
    const unsigned long long after = tut::globaltimer_ns();
    if (threadIdx.x % 32 == 0) delay_ns[warp * kPerturbIterations + it] = after - before;
  }
}

}  // namespace
#endif

// In the TUTORIAL_PERTURB build a seeded subset of (warp, iteration) points sleeps: some, not all
// (about one in eight by design; the bounds leave room for __nanosleep's approximate duration).
TEST(Perturb, ASeededSubsetOfWarpsSleepsInThePerturbationBuild) {
#if !defined(TUTORIAL_PERTURB)
  GTEST_SKIP() << "not a -DTUTORIAL_PERTURB=ON build: perturb() is a no-op";
#else
  SKIP_UNLESS_GPU(8, 0);
  constexpr unsigned kBlocks = 64, kThreads = 256;
  const unsigned points = kBlocks * kThreads / 32 * kPerturbIterations;
  tut::DeviceBuffer<unsigned long long> delay(points);
  tut::set_perturb_seed(12345);
  time_perturbation_points<<<kBlocks, kThreads>>>(delay.data());
  CUDA_CHECK_LAST_LAUNCH();
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<unsigned long long> ns = delay.download(nullptr);
  unsigned slept = 0;
  for (unsigned long long d : ns) slept += d >= 500 ? 1 : 0;
  EXPECT_GT(slept, points / 50) << slept << " of " << points << " points slept";
  EXPECT_LT(slept, points / 3) << slept << " of " << points << " points slept";
  tut::set_perturb_seed(0);  // 0: no delays
#endif
}
