// Probe: does a device-to-device cudaMemcpyAsync run on the SMs (as a kernel the driver
// launches) or on a copy engine?
//
// Method: fill every SM to its thread limit with a kernel that spins for SPIN_MS on
// %globaltimer (stream A), then enqueue a D2D copy on stream B right after it. A copy that needs
// SMs cannot start until the spin kernel leaves them; a copy engine does not care. Compare when
// the copy completes with when the spin kernel completes (events on each stream, measured from
// one start event), and with the copy's time on an idle GPU.
//
//   copy ends long before the spin ends  -> the copy did not need the SMs (copy engine)
//   copy ends after the spin ends        -> the copy waited for SMs (a kernel)
//
// Build: nvcc -std=c++17 -O2 -arch=sm_90 -o d2d_probe tools/probes/d2d_memcpy_needs_sms.cu
// Run:   ./d2d_probe run      (prints the times and one verdict line last)
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <chrono>
#include <cstring>
#include <thread>

#define CHECK(expr)                                                                     \
  do {                                                                                  \
    cudaError_t e_ = (expr);                                                            \
    if (e_ != cudaSuccess) {                                                            \
      std::fprintf(stderr, "%s failed: %s (%s:%d)\n", #expr, cudaGetErrorString(e_),    \
                   __FILE__, __LINE__);                                                 \
      std::exit(1);                                                                     \
    }                                                                                   \
  } while (0)

constexpr unsigned long long SPIN_NS = 50ull * 1000 * 1000;  // 50 ms per block

__global__ void spin_kernel(unsigned long long ns, int* sink) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
  if (threadIdx.x == 0 && now == 0) *sink = 1;  // never true; keeps the loop
}

int main(int argc, char** argv) {
  if (argc != 2 || std::strcmp(argv[1], "run") != 0) {
    std::fprintf(stderr, "usage: %s run\n", argv[0]);
    return 2;
  }
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::printf("SKIP: no GPU\n");
    return 77;
  }
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  // Fill every SM's thread slots: blocks of 1024 threads, as many per SM as the SM holds.
  const int threads = 1024;
  int per_sm = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, spin_kernel, threads, 0));
  const int blocks = per_sm * prop.multiProcessorCount;

  const size_t bytes = size_t{1} << 30;  // 1 GiB: ~0.5 ms on an idle H200
  void *src = nullptr, *dst = nullptr;
  int* sink = nullptr;
  CHECK(cudaMalloc(&src, bytes));
  CHECK(cudaMalloc(&dst, bytes));
  CHECK(cudaMalloc(&sink, sizeof(int)));
  CHECK(cudaMemset(src, 0x5A, bytes));

  cudaStream_t a, b;
  CHECK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
  CHECK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
  cudaEvent_t start, spin_done, copy_done;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&spin_done));
  CHECK(cudaEventCreate(&copy_done));

  // The copy alone, on an idle GPU (warm-up first).
  for (int i = 0; i < 3; ++i) CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, b));
  CHECK(cudaEventRecord(start, b));
  CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, b));
  CHECK(cudaEventRecord(copy_done, b));
  CHECK(cudaEventSynchronize(copy_done));
  float idle_copy_ms = 0;
  CHECK(cudaEventElapsedTime(&idle_copy_ms, start, copy_done));

  // The copy beside a kernel that holds every SM: the host enqueues the copy 10 ms after the
  // kernel, when its blocks are certainly resident (they spin for 50 ms), so a copy that needs
  // an SM has none until the kernel ends.
  CHECK(cudaEventRecord(start, a));
  spin_kernel<<<blocks, threads, 0, a>>>(SPIN_NS, sink);
  CHECK(cudaGetLastError());
  CHECK(cudaEventRecord(spin_done, a));
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, b));
  CHECK(cudaEventRecord(copy_done, b));
  CHECK(cudaDeviceSynchronize());
  float spin_end_ms = 0, copy_end_ms = 0;
  CHECK(cudaEventElapsedTime(&spin_end_ms, start, spin_done));
  CHECK(cudaEventElapsedTime(&copy_end_ms, start, copy_done));

  std::printf("GPU: %s, %d SMs, spin kernel %d blocks x %d threads (%d per SM)\n", prop.name,
              prop.multiProcessorCount, blocks, threads, per_sm);
  std::printf("1 GiB D2D cudaMemcpyAsync on an idle GPU: %.3f ms\n", idle_copy_ms);
  std::printf("beside a kernel that holds every SM for %.0f ms: copy done at %.3f ms, kernel done at %.3f ms\n",
              SPIN_NS / 1e6, copy_end_ms, spin_end_ms);
  const bool waited = copy_end_ms >= spin_end_ms;
  std::printf("verdict: %s\n", waited ? "the D2D copy waited for the SMs (it runs as a kernel)"
                                      : "the D2D copy finished while every SM was busy (copy engine)");
  CHECK(cudaFree(src));
  CHECK(cudaFree(dst));
  CHECK(cudaFree(sink));
  return 0;
}
