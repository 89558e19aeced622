#include "device_info.cuh"

#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "cuda_check.cuh"

namespace tut {

int usable_gpu_count() {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();  // clear the error so later calls do not inherit it
    return 0;
  }
  return count;
}

DeviceSummary query_device() {
  cudaDeviceProp p{};
  CUDA_CHECK(cudaGetDeviceProperties(&p, 0));
  DeviceSummary d;
  d.name = p.name;
  d.cc_major = p.major;
  d.cc_minor = p.minor;
  d.sm_count = p.multiProcessorCount;
  d.l2_bytes = p.l2CacheSize;
  d.smem_optin_per_block = static_cast<long long>(p.sharedMemPerBlockOptin);
  d.smem_per_sm = static_cast<long long>(p.sharedMemPerMultiprocessor);
  d.max_threads_per_sm = p.maxThreadsPerMultiProcessor;
  d.global_mem_bytes = static_cast<long long>(p.totalGlobalMem);
  CUDA_CHECK(cudaDriverGetVersion(&d.driver_version));
  CUDA_CHECK(cudaRuntimeGetVersion(&d.runtime_version));
  char bus_id[32] = "";
  if (cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, 0) == cudaSuccess) d.pci_bus_id = bus_id;
  else (void)cudaGetLastError();  // NVML readings are then skipped; nothing else needs it
  return d;
}

std::string gpu_missing_reason(int major, int minor) {
  if (usable_gpu_count() == 0) return "no CUDA GPU or driver found";
  DeviceSummary d = query_device();
  // Testing hook: TUTORIAL_PRETEND_CC=7.5 makes this GPU look older, so the "GPU too old"
  // path (exit 77 naming the required compute capability) can be tested on any machine.
  if (const char* pretend = std::getenv("TUTORIAL_PRETEND_CC")) {
    int pm = 0, pn = 0;
    if (std::sscanf(pretend, "%d.%d", &pm, &pn) == 2) {
      d.cc_major = pm;
      d.cc_minor = pn;
    }
  }
  if (d.cc_major > major || (d.cc_major == major && d.cc_minor >= minor)) return "";
  std::ostringstream os;
  os << "GPU '" << d.name << "' is compute capability " << d.cc_major << "." << d.cc_minor
     << "; this needs compute capability " << major << "." << minor << " or newer";
  return os.str();
}

bool gpu_supports(int major, int minor) { return gpu_missing_reason(major, minor).empty(); }

DeviceSummary require_cc(int major, int minor, const std::string& what) {
  const std::string reason = gpu_missing_reason(major, minor);
  if (!reason.empty()) {
    std::printf("SKIP: %s needs a GPU of compute capability %d.%d or newer: %s\n", what.c_str(),
                major, minor, reason.c_str());
    std::exit(kExitSkip);
  }
  CUDA_CHECK(cudaSetDevice(0));
  return query_device();
}

std::string describe_device(const DeviceSummary& d) {
  std::ostringstream os;
  os << "  name                      " << d.name << "\n"
     << "  compute capability        " << d.cc_major << "." << d.cc_minor << "\n"
     << "  SMs                       " << d.sm_count << "\n"
     << "  L2 cache                  " << format_bytes(double(d.l2_bytes)) << "\n"
     << "  shared memory per SM      " << format_bytes(double(d.smem_per_sm)) << "\n"
     << "  shared memory per block   " << format_bytes(double(d.smem_optin_per_block))
     << " (opt-in maximum)\n"
     << "  max threads per SM        " << d.max_threads_per_sm << "\n"
     << "  global memory             " << format_bytes(double(d.global_mem_bytes)) << "\n"
     << "  driver / runtime          " << d.driver_version << " / " << d.runtime_version << "\n";
  return os.str();
}

}  // namespace tut
