// Chapter 05, host side: the variant registry. The workload's Problem, CPU reference and sizes
// are common/workload_reversed_tiles.cuh; the kernels and their launcher are kernels.cuh.
#pragma once

#include <string>
#include <vector>

#include "common/harness.cuh"
#include "common/workload_reversed_tiles.cuh"
#include "kernels.cuh"
// The negative (v9) and add_negatives(), which variants() calls last; the Problem it needs is
// the workload's, included above.
#include "tests/negatives/05_pipeline_primitives.cuh"

namespace ch05 {

using Problem = tut::reversed_tiles::Problem;

// Every variant runs at --blocks-per-sm blocks per SM (default 1): the regime where the number
// of tiles in flight decides the bandwidth. Names give the ring in slots and the depth in tiles
// in flight at each wait (slots - 1 in this chapter's wait-first loop).
inline std::vector<tut::Variant<Problem>> variants() {
  tut::VariantList<Problem> v;
  using Kernel = void (*)(const std::uint32_t*, std::uint32_t*, std::size_t);
  auto add = [&v](const std::string& key, const std::string& name, const std::string& description,
                  Kernel kernel) {
    v.add(key, name, description, [kernel](Problem& p, cudaStream_t s) {
      // every kernel takes (d_in, d_out, n_words) and walks its tiles grid-stride
      tut::launch_persistent(kernel, THREADS, 0, p.sms(), p.blocks_per_sm(), s, p.d_in.data(),
                             p.d_out.data(), p.n_words);
    });
  };
  add("v0_pipeline_s4", "v0 cuda::pipeline 4 slots (3 in flight)",
      "chapter 04's cuda::pipeline and memcpy_async 16 B in this chapter's wait-first loop",
      stream_v0_cuda_pipeline_kernel<4>);
  // v1 at 16 B in rings of 2, 3 and 4 slots (1, 2 and 3 tiles in flight at each wait)
  const struct {
    int slots;
    Kernel kernel;
    const char* description;
  } prim16[] = {{2, stream_v1_primitives_kernel<2, 16>,
                 "__pipeline_memcpy_async 16 B (cp.async.cg), double buffering"},
                {3, stream_v1_primitives_kernel<3, 16>,
                 "__pipeline_memcpy_async 16 B (cp.async.cg), triple buffering"},
                {4, stream_v1_primitives_kernel<4, 16>,
                 "__pipeline_memcpy_async 16 B: v0 written with primitives"}};
  for (const auto& r : prim16) {
    const std::string slots = std::to_string(r.slots);
    add("v1_prim16_s" + slots,
        "v1 primitives 16 B " + slots + " slots (" + std::to_string(r.slots - 1) + " in flight)",
        r.description, r.kernel);
  }
  add("v1_prim8_s3", "v1 primitives 8 B 3 slots (2 in flight)",
      "__pipeline_memcpy_async 8 B (cp.async.ca), two copies per thread per tile",
      stream_v1_primitives_kernel<3, 8>);
  add("v1_prim4_s3", "v1 primitives 4 B 3 slots (2 in flight)",
      "__pipeline_memcpy_async 4 B (cp.async.ca), four copies per thread per tile",
      stream_v1_primitives_kernel<3, 4>);
  add("v2_mbarrier_s3", "v2 arrive_on mbarrier, token, 3 slots",
      "16 B copies completed on an mbarrier per slot via __pipeline_arrive_on; per-slot tokens",
      stream_v2_mbarrier_kernel<3>);
  add("v3_mbarrier_parity_s3", "v3 arrive_on mbarrier, parity, 3 slots",
      "as v2, waiting on the phase parity (mbarrier.test_wait.parity): no token array",
      stream_v3_mbarrier_parity_kernel<3>);
  add_negatives(v);
  return v.list;
}

}  // namespace ch05
