// Probe: does compute-sanitizer synccheck accept cp.async.mbarrier.arrive in its two forms?
//
//   inc    cp.async + cp.async.mbarrier.arrive.shared.b64 (pending count +1 now, -1 when the
//          thread's copies land) + mbarrier.arrive; barrier expects THREADS arrivals.
//          This is the form CCCL uses for cuda::memcpy_async onto a shared cuda::barrier.
//   noinc  cp.async + cp.async.mbarrier.arrive.noinc.shared.b64 (the copies' completion is one
//          of the expected arrivals) + mbarrier.arrive; barrier expects 2 x THREADS.
//   two    like inc, but two copies (and two cp.async.mbarrier.arrive) per thread per phase, as
//          in chapter 02's halo threads.
// All three are correct by the PTX ISA's rules; the kernel checks its own result and prints
// PASS/FAIL. Run each under `compute-sanitizer --tool synccheck probe <form>`.
// Build: nvcc -arch=sm_80 (or sm_90) -o probe synccheck_mbarrier_arrive.cu
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

constexpr int THREADS = 128;
constexpr int PHASES = 4;

__global__ void probe_kernel(const float* in, float* out, int form) {
  __shared__ alignas(8) unsigned long long bar;
  __shared__ float s[2 * THREADS];
  const unsigned bar_addr = static_cast<unsigned>(__cvta_generic_to_shared(&bar));
  const int t = threadIdx.x;
  if (t == 0) {
    const unsigned count = form == 1 ? 2 * THREADS : THREADS;
    asm volatile("mbarrier.init.shared.b64 [%0], %1;" ::"r"(bar_addr), "r"(count));
  }
  __syncthreads();
  for (int p = 0; p < PHASES; ++p) {
    const float* src = in + p * 2 * THREADS;
    const int copies = form == 2 ? 2 : 1;
    for (int c = 0; c < copies; ++c) {
      const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(&s[c * THREADS + t]));
      asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(dst), "l"(src + c * THREADS + t));
      if (form == 1)
        asm volatile("cp.async.mbarrier.arrive.noinc.shared.b64 [%0];" ::"r"(bar_addr));
      else
        asm volatile("cp.async.mbarrier.arrive.shared.b64 [%0];" ::"r"(bar_addr));
    }
    unsigned long long state;
    asm volatile("mbarrier.arrive.shared.b64 %0, [%1];" : "=l"(state) : "r"(bar_addr) : "memory");
    unsigned done = 0;
    while (!done)
      asm volatile("{ .reg .pred p; mbarrier.test_wait.shared.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                   : "=r"(done) : "r"(bar_addr), "l"(state) : "memory");
    float sum = s[(t + 1) % THREADS];  // another thread's copy: needs the barrier
    if (copies == 2) sum += s[THREADS + (t + 7) % THREADS];
    out[p * THREADS + t] = sum;
    __syncthreads();  // everyone read s before the next phase's copies overwrite it
  }
}

int main(int argc, char** argv) {
  const char* names[] = {"inc", "noinc", "two"};
  int form = -1;
  for (int f = 0; f < 3; ++f)
    if (argc == 2 && std::strcmp(argv[1], names[f]) == 0) form = f;
  if (form < 0) {
    std::fprintf(stderr, "usage: %s inc|noinc|two\n", argv[0]);
    return 2;
  }
  const int n_in = PHASES * 2 * THREADS, n_out = PHASES * THREADS;
  float h_in[n_in], h_out[n_out];
  for (int i = 0; i < n_in; ++i) h_in[i] = static_cast<float>(i);
  float *d_in, *d_out;
  cudaMalloc(&d_in, sizeof h_in);
  cudaMalloc(&d_out, sizeof h_out);
  cudaMemcpy(d_in, h_in, sizeof h_in, cudaMemcpyHostToDevice);
  cudaMemset(d_out, 0xFF, sizeof h_out);
  probe_kernel<<<1, THREADS>>>(d_in, d_out, form);
  const cudaError_t err = cudaDeviceSynchronize();
  cudaMemcpy(h_out, d_out, sizeof h_out, cudaMemcpyDeviceToHost);
  int bad = 0;
  for (int p = 0; p < PHASES; ++p)
    for (int t = 0; t < THREADS; ++t) {
      float want = h_in[p * 2 * THREADS + (t + 1) % THREADS];
      if (form == 2) want += h_in[p * 2 * THREADS + THREADS + (t + 7) % THREADS];
      bad += h_out[p * THREADS + t] != want;
    }
  std::printf("form %s: %s (%d wrong, %s)\n", names[form], bad || err ? "FAIL" : "PASS", bad,
              cudaGetErrorString(err));
  return bad || err ? 1 : 0;
}
