// The zero-cost claim of common/timeline.cuh, checked on a ring kernel: ring<STAGES> with
// its trace calls on tut::TraceOff must compile to the same SASS as ring_plain<STAGES>, the
// same kernel with the calls deleted (tools/check_timeline_zero_cost.py compares them).
// The TraceOn instance is compiled too, so the test also sees that tracing, when on, is there.
#include "sample_ring.cuh"

using timeline_sample::ring;
using timeline_sample::ring_plain;

template __global__ void ring<2>(const uint4*, uint4*, int, tut::TraceOff);
template __global__ void ring<4>(const uint4*, uint4*, int, tut::TraceOff);
template __global__ void ring<2, tut::TraceOn>(const uint4*, uint4*, int, tut::TraceOn);
template __global__ void ring_plain<2>(const uint4*, uint4*, int);
template __global__ void ring_plain<4>(const uint4*, uint4*, int);
