/// @file sample_ring.cuh
/// @brief A small cp.async ring with trace points (common/timeline.cuh), and the same kernel
///        without them: the subject of the timeline tests. ring<STAGES, Tracing> walks its
///        block's tiles through a STAGES-slot shared-memory ring (issue tile j + STAGES - 1,
///        wait for tile j, compute, release); ring_plain<STAGES> is ring with the trace calls
///        deleted. Each output vector is the input vector of the mirrored thread with eight
///        LCG steps applied to .x, so the output can be checked exactly.
#pragma once

#include <cuda_pipeline.h>

#include <cstdint>

#include "common/timeline.cuh"

namespace timeline_sample {

constexpr int kThreads = 256;

template <int STAGES, class Tracing = tut::TraceOff>
__global__ void ring(const uint4* __restrict__ in, uint4* __restrict__ out, int tiles,
                     Tracing trace = {}) {
  __shared__ uint4 ring_slots[STAGES][kThreads];
  auto lane = trace.lane(0, threadIdx.x == 0);
  const int t = threadIdx.x;
  auto tile_base = [&](int j) { return (blockIdx.x + j * gridDim.x) * kThreads; };
  for (int k = 0; k < STAGES - 1; ++k) {
    if (k < tiles) {
      __pipeline_memcpy_async(&ring_slots[k][t], &in[tile_base(k) + t], sizeof(uint4));
      lane.copy_issued(k, k);
    }
    __pipeline_commit();
  }
  for (int j = 0; j < tiles; ++j) {
    const int next = j + STAGES - 1;
    if (next < tiles) {
      __pipeline_memcpy_async(&ring_slots[next % STAGES][t], &in[tile_base(next) + t],
                              sizeof(uint4));
      lane.copy_issued(next, next % STAGES);
    }
    __pipeline_commit();
    lane.wait_begun(j, j % STAGES);
    __pipeline_wait_prior(STAGES - 1);
    __syncthreads();
    lane.wait_done(j, j % STAGES);
    lane.compute_begun(j, j % STAGES);
    uint4 v = ring_slots[j % STAGES][kThreads - 1 - t];
    for (int r = 0; r < 8; ++r) v.x = v.x * 1664525u + 1013904223u;
    out[tile_base(j) + t] = v;
    lane.compute_ended(j, j % STAGES);
    __syncthreads();
    lane.slot_released(j, j % STAGES);
  }
  lane.close();
}

template <int STAGES>
__global__ void ring_plain(const uint4* __restrict__ in, uint4* __restrict__ out, int tiles) {
  __shared__ uint4 ring_slots[STAGES][kThreads];
  const int t = threadIdx.x;
  auto tile_base = [&](int j) { return (blockIdx.x + j * gridDim.x) * kThreads; };
  for (int k = 0; k < STAGES - 1; ++k) {
    if (k < tiles) {
      __pipeline_memcpy_async(&ring_slots[k][t], &in[tile_base(k) + t], sizeof(uint4));
    }
    __pipeline_commit();
  }
  for (int j = 0; j < tiles; ++j) {
    const int next = j + STAGES - 1;
    if (next < tiles) {
      __pipeline_memcpy_async(&ring_slots[next % STAGES][t], &in[tile_base(next) + t],
                              sizeof(uint4));
    }
    __pipeline_commit();
    __pipeline_wait_prior(STAGES - 1);
    __syncthreads();
    uint4 v = ring_slots[j % STAGES][kThreads - 1 - t];
    for (int r = 0; r < 8; ++r) v.x = v.x * 1664525u + 1013904223u;
    out[tile_base(j) + t] = v;
    __syncthreads();
  }
}

}  // namespace timeline_sample
