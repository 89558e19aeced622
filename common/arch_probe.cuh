/// @file arch_probe.cuh
/// @brief Which architecture was the code that this GPU runs compiled for?
///
/// A binary carries SASS for some architectures and PTX for others. The driver loads the SASS
/// that fits the GPU or, failing that, JIT-compiles the newest PTX not newer than the GPU.
/// Code compiled for compute_80 then runs on an H200, but every `#if __CUDA_ARCH__ >= 900`
/// branch in it was compiled out: a TMA kernel built that way does nothing (or traps) and its
/// output is garbage. So before the checks the harness asks the loaded image what it was
/// compiled for, and skips the variants that need a newer architecture, naming it, instead
/// of reporting a wrong answer. A binary with no usable image at all (sm_90a SASS on a
/// compute capability 10.0 GPU) is skipped as a whole.
#pragma once

#include <cuda_runtime.h>

#include <cstdlib>
#include <string>

namespace tut {

namespace detail {

/// An empty kernel compiled into every chapter binary with the rest of its device code: the
/// driver picks the same image for it as for the chapter's kernels.
template <int Unused = 0>
__global__ void arch_probe_kernel() {}

}  // namespace detail

/// @brief The image the driver loaded for this GPU, as cudaFuncGetAttributes reports it.
struct LoadedImage {
  bool present = false;   ///< false: the binary has no code this GPU can run
  int ptx_arch = 0;       ///< the __CUDA_ARCH__ / 10 the code was compiled for (80, 90, ...)
  int binary_arch = 0;    ///< the SASS architecture running (differs from ptx_arch after JIT)
  std::string error;      ///< the runtime's error when !present
};

/// @brief Ask the runtime about the probe kernel (once per process; current device).
/// @note  The environment variable TUTORIAL_PRETEND_IMAGE_ARCH (e.g. "80") overrides ptx_arch,
///        and "none" makes the image absent, so tests can take these paths on any GPU.
inline LoadedImage loaded_image() {
  static const LoadedImage image = [] {
    LoadedImage li;
    cudaFuncAttributes attr{};
    const cudaError_t err = cudaFuncGetAttributes(&attr, detail::arch_probe_kernel<>);
    if (err != cudaSuccess) {
      (void)cudaGetLastError();  // not sticky; clear it so later calls do not inherit it
      li.error = cudaGetErrorString(err);
    } else {
      li.present = true;
      li.ptx_arch = attr.ptxVersion;
      li.binary_arch = attr.binaryVersion;
    }
    if (const char* pretend = std::getenv("TUTORIAL_PRETEND_IMAGE_ARCH")) {
      if (std::string(pretend) == "none") {
        li.present = false;
        li.error = "TUTORIAL_PRETEND_IMAGE_ARCH=none";
      } else if (std::atoi(pretend) > 0) {
        li.ptx_arch = std::atoi(pretend);
      }
    }
    return li;
  }();
  return image;
}

/// @brief Why code needing compute capability @p needed_cc (e.g. 90) cannot run from this
///        binary on this GPU ("" when it can).
inline std::string missing_arch_reason(int needed_cc) {
  const LoadedImage li = loaded_image();
  if (!li.present) {
#ifdef TUTORIAL_BUILT_ARCHS  // the chapter's CUDA_ARCHITECTURES, set by tutorial_add_chapter
    return "this binary has no code this GPU can run (built for " TUTORIAL_BUILT_ARCHS "; " +
           li.error + ")";
#else
    return "this binary has no code this GPU can run (" + li.error + ")";
#endif
  }
  if (needed_cc <= li.ptx_arch) return "";
  const std::string need = std::to_string(needed_cc);
  return "binary has no sm_" + need + " code for this GPU (it runs code compiled for compute_" +
         std::to_string(li.ptx_arch) + "); rebuild with -DCMAKE_CUDA_ARCHITECTURES=" + need;
}

}  // namespace tut
