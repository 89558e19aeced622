// Chapter 11: the bookkeeping around a TMA ring, written once here and reused by chapters 12
// and 13. They include it from the repository root
// (`#include "chapters/11_tma_bulk_copies/ring_helpers.cuh"`), so the exercise copies find it
// too. Everything here is in namespace ch11; the later chapters name what they take with
// using-declarations.
//
// Nothing here issues a copy, posts an expect_tx or waits for a copy: those lines stay in each
// chapter's kernels, where they are taught (chapter 11's ring also spells out its barrier
// initialisation and fence). What is here:
//   - smem_addr: the 32-bit shared-window address that PTX shared-memory operands take;
//   - tiles_of_this_block, block_tile, ring_parity: which tiles a persistent block walks, and
//     which phase of which ring slot its tile j uses;
//   - init_full_barriers: a ring's 'full' barriers, initialised and fenced for the TMA unit;
//   - the bounded mbarrier wait, which lets a broken variant fail instead of hanging;
//   - host side: the device error word those waits report into, the check that counts a
//     timeout as a failure, and the variant-registry helper of chapters 11-13.
#pragma once

#include <cuda/ptx>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "common/device_buffer.cuh"
#include "common/harness.cuh"

namespace ch11 {

// ---------------------------------------------------------------------------------------------
// Device: addresses, the grid-stride walk over tiles, ring phases
// ---------------------------------------------------------------------------------------------
__device__ inline std::uint32_t smem_addr(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// A persistent grid walks the tiles grid-stride: block b takes tiles b, b + gridDim.x, ...
// tiles_of_this_block() counts them; block_tile(j) is the index of this block's tile j.
__device__ inline std::size_t tiles_of_this_block(std::size_t num_tiles) {
  return blockIdx.x < num_tiles ? (num_tiles - 1 - blockIdx.x) / gridDim.x + 1 : 0;
}

__device__ inline std::size_t block_tile(std::size_t j) {
  return blockIdx.x + j * gridDim.x;
}

// This block's tile j goes through ring slot j % STAGES in that slot's phase n = j / STAGES.
// An mbarrier wait names a phase by its parity only: n & 1.
template <int STAGES, class Index>
__device__ inline std::uint32_t ring_parity(Index j) {
  return static_cast<std::uint32_t>(j / STAGES) & 1;
}

// The 'full' barriers of a ring whose slots are released by __syncthreads (chapter 11's v3,
// chapter 12's v2-v4): thread 0 initialises N of them with count 1 (the producer's
// arrive.expect_tx is the one arrival; the tile's bytes are the rest of the phase) and fences
// the initialisation for the async proxy, since the TMA unit will complete_tx on them. The
// block barrier then publishes them: nobody touches a barrier before it is initialised.
template <int N>
__device__ inline void init_full_barriers(std::uint64_t* full) {
  if (threadIdx.x == 0) {
    for (int s = 0; s < N; ++s) cuda::ptx::mbarrier_init(&full[s], 1);
    cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
  }
  __syncthreads();
}

// ---------------------------------------------------------------------------------------------
// Device: the bounded wait
// ---------------------------------------------------------------------------------------------
// An mbarrier wait that never completes (a wrong byte count, a wrong phase, a multicast that
// leaves a block out) would otherwise hang the GPU. Every wait in chapters 11-13 gives up
// after this many SM clock cycles (about 1 s at 1.98 GHz); the caller records the failure in
// a device error word and leaves the poison in place.
constexpr long long WAIT_BUDGET_CYCLES = 1ll << 31;

// LESSON: the bounded wait. try_wait returns false after a hardware time limit; we loop until
// the phase completes or the budget runs out. Production code loops forever; a tutorial whose
// negative variants must fail (not hang) cannot. `try_wait()` is one mbarrier.try_wait (raw
// PTX or cuda::ptx); true once the phase it names has completed.
template <class TryWait>
__device__ inline bool wait_bounded(TryWait try_wait) {
  const long long start = clock64();
  while (!try_wait())
    if (clock64() - start > WAIT_BUDGET_CYCLES) return false;
  return true;
}

// The bounded wait through cuda::ptx: true once the phase of `bar` with parity `parity` has
// completed (acquire: the bytes that completed it are visible to this thread), false if it
// gave up.
__device__ inline bool wait_parity_bounded(std::uint64_t* bar, std::uint32_t parity) {
  return wait_bounded([&] { return cuda::ptx::mbarrier_try_wait_parity(bar, parity); });
}

// ---------------------------------------------------------------------------------------------
// Host: the error word, the check, the registry
// ---------------------------------------------------------------------------------------------
// One device word the kernels atomicOr a reason into when a bounded wait gives up (0: every
// wait completed). poison() clears it together with the output; verify() reads it.
class ErrorWord {
 public:
  unsigned* data() { return word_.data(); }
  void clear(cudaStream_t s) { CUDA_CHECK(cudaMemsetAsync(word_.data(), 0, sizeof(unsigned), s)); }
  unsigned read(cudaStream_t s) const { return word_.download(s)[0]; }

 private:
  tut::DeviceBuffer<unsigned> word_{1};
};

// What chapters 12 and 13 report for a nonzero error word (their only reason: a timeout).
inline std::string describe_timeout(unsigned /*err*/) {
  return "an mbarrier wait timed out (gave up)";
}

// verify() for a kernel with bounded waits: print what the device reported, then compare the
// output with the CPU reference word by word. A timeout is a failure even where no word
// differs (the poison may happen to match, or the wait gave up after the last store).
inline tut::VerifyResult compare_words_and_error(cudaStream_t s,
                                                 const tut::DeviceBuffer<std::uint32_t>& d_out,
                                                 const std::vector<std::uint32_t>& want,
                                                 const ErrorWord& error,
                                                 std::string (*describe)(unsigned)) {
  const unsigned err = error.read(s);
  if (err != 0) std::printf("  device reported: %s\n", describe(err).c_str());
  const std::vector<std::uint32_t> got = d_out.download(s);
  tut::VerifyResult r = tut::compare_exact_words(got.data(), want.data(), want.size());
  if (err != 0 && r.mismatches == 0) r.mismatches = 1;
  return r;
}

// The registry of chapters 11-13: add(key, name, description, launch[, negative]) appends a
// variant; negative = true marks a deliberately broken one (it must FAIL, see authoring.md).
template <class Problem>
struct VariantList {
  void operator()(std::string key, std::string name, std::string description,
                  std::function<void(Problem&, cudaStream_t)> launch, bool negative = false) {
    list.push_back(tut::Variant<Problem>{std::move(key), std::move(name), std::move(description),
                                         std::move(launch)});
    list.back().negative = negative;
  }
  std::vector<tut::Variant<Problem>> list;
};

}  // namespace ch11
