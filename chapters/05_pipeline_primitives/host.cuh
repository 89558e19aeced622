// Chapter 05, host side: the variant registry. The workload's Problem, CPU reference and sizes
// are common/workload_reversed_tiles.cuh; the kernels and launchers are kernels.cuh.
#pragma once

#include <vector>

#include "common/harness.cuh"
#include "common/workload_reversed_tiles.cuh"
#include "kernels.cuh"

namespace ch05 {

using Problem = tut::reversed_tiles::Problem;

// Every variant runs at --blocks-per-sm blocks per SM (default 1): the regime where the number
// of tiles in flight decides the bandwidth. Names give the ring in slots and the depth in tiles
// in flight at each wait (slots - 1 in this chapter's wait-first loop).
inline std::vector<tut::Variant<Problem>> variants() {
  tut::VariantList<Problem> v;
  using Launch = void (*)(const std::uint32_t*, std::uint32_t*, std::size_t, int, int, cudaStream_t);
  auto add = [&v](const char* key, const char* name, const char* description, Launch launch) {
    return &v.add(key, name, description, [launch](Problem& p, cudaStream_t s) {
      launch(p.d_in.data(), p.d_out.data(), p.n_words, p.sms(), p.blocks_per_sm(), s);
    });
  };
  add("v0_pipeline_s4", "v0 cuda::pipeline 4 slots (3 in flight)",
      "chapter 04's cuda::pipeline and memcpy_async 16 B in this chapter's wait-first loop",
      launch_stream_v0<4>);
  add("v1_prim16_s2", "v1 primitives 16 B 2 slots (1 in flight)",
      "__pipeline_memcpy_async 16 B (cp.async.cg), double buffering", launch_stream_v1<2, 16>);
  add("v1_prim16_s3", "v1 primitives 16 B 3 slots (2 in flight)",
      "__pipeline_memcpy_async 16 B (cp.async.cg), triple buffering", launch_stream_v1<3, 16>);
  add("v1_prim16_s4", "v1 primitives 16 B 4 slots (3 in flight)",
      "__pipeline_memcpy_async 16 B: v0 written with primitives", launch_stream_v1<4, 16>);
  add("v1_prim8_s3", "v1 primitives 8 B 3 slots (2 in flight)",
      "__pipeline_memcpy_async 8 B (cp.async.ca), two copies per thread per tile",
      launch_stream_v1<3, 8>);
  add("v1_prim4_s3", "v1 primitives 4 B 3 slots (2 in flight)",
      "__pipeline_memcpy_async 4 B (cp.async.ca), four copies per thread per tile",
      launch_stream_v1<3, 4>);
  add("v2_mbarrier_s3", "v2 arrive_on mbarrier, token, 3 slots",
      "16 B copies completed on an mbarrier per slot via __pipeline_arrive_on; per-slot tokens",
      launch_stream_v2<3>);
  add("v3_mbarrier_parity_s3", "v3 arrive_on mbarrier, parity, 3 slots",
      "as v2, waiting on the phase parity (mbarrier.test_wait.parity): no token array",
      launch_stream_v3<3>);
  add("v9_zfill_swapped", "v9 BROKEN: zfill given as src-size",
      "negative: passes the valid byte count as the zero-fill count; must FAIL",
      launch_stream_v9)->negative = true;
  return v.list;
}

}  // namespace ch05
