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
#include <vector>

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
  /// true when that code is an architecture-specific image (sm_90a, sm_100a, sm_120a: the
  /// "a" targets), which alone holds instructions such as wgmma or setmaxnreg. The runtime
  /// does not report it; the binary knows it from the architectures it was built for.
  bool arch_specific = false;
};

/// @brief The image a binary compiled for @p target ("90a", "120a", "80") would run on a GPU
///        of that same architecture: what `--gates` evaluates the gates against, without a GPU.
///        An empty LoadedImage (present = false) when @p target is not of that form.
inline LoadedImage image_for_target(const std::string& target) {
  LoadedImage li;
  std::size_t digits = 0;
  while (digits < target.size() && target[digits] >= '0' && target[digits] <= '9') ++digits;
  const std::string rest = target.substr(digits);
  if (digits == 0 || digits > 4 || !(rest.empty() || rest == "a")) return li;
  li.present = true;
  li.ptx_arch = li.binary_arch = std::atoi(target.substr(0, digits).c_str());
  li.arch_specific = rest == "a";
  return li;
}

/// @brief "sm_90a" for an arch-specific image of 90, "sm_90" otherwise.
inline std::string target_name(int arch, bool arch_specific) {
  return "sm_" + std::to_string(arch) + (arch_specific ? "a" : "");
}

namespace detail {

/// Does the comma-separated architecture list @p built (CMake's CUDA_ARCHITECTURES, e.g.
/// "80-real,90a-real") hold an architecture-specific entry for @p arch ("90a...")?
inline bool built_arch_specific(const std::string& built, int arch) {
  const std::string want = std::to_string(arch) + "a";
  std::size_t start = 0;
  while (start <= built.size()) {
    std::size_t end = built.find(',', start);
    if (end == std::string::npos) end = built.size();
    const std::string entry = built.substr(start, end - start);
    if (entry.compare(0, want.size(), want) == 0) return true;
    start = end + 1;
  }
  return false;
}

}  // namespace detail

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
#ifdef TUTORIAL_BUILT_ARCHS  // an "a" entry for this architecture: its image is that one
      li.arch_specific = detail::built_arch_specific(TUTORIAL_BUILT_ARCHS, li.ptx_arch);
#endif
    }
    if (const char* pretend = std::getenv("TUTORIAL_PRETEND_IMAGE_ARCH")) {
      if (std::string(pretend) == "none") {
        li.present = false;
        li.error = "TUTORIAL_PRETEND_IMAGE_ARCH=none";
      } else if (std::atoi(pretend) > 0) {  // "80", or "120a" for an arch-specific image
        li.ptx_arch = std::atoi(pretend);
        li.arch_specific = std::string(pretend).back() == 'a';
      }
    }
    return li;
  }();
  return image;
}

/// @brief Why code needing compute capability @p needed_cc (e.g. 90), and, when
///        @p arch_specific is not empty, the architecture-specific image of one of those
///        architectures (e.g. {90}: sm_90a), cannot run from image @p li ("" when it can).
/// @note  Pure: run_chapter() asks it about the loaded image, `--gates` about the image a
///        build for each target would run, so the table and the run cannot disagree.
inline std::string missing_code_reason(const LoadedImage& li, int needed_cc,
                                       const std::vector<int>& arch_specific = {}) {
  if (!li.present) {
#ifdef TUTORIAL_BUILT_ARCHS  // the chapter's CUDA_ARCHITECTURES, set by tutorial_add_chapter
    return "this binary has no code this GPU can run (built for " TUTORIAL_BUILT_ARCHS "; " +
           li.error + ")";
#else
    return "this binary has no code this GPU can run (" + li.error + ")";
#endif
  }
  const std::string running = target_name(li.ptx_arch, li.arch_specific);
  if (needed_cc > li.ptx_arch) {
    const std::string need = std::to_string(needed_cc);
    return "binary has no sm_" + need + " code for this GPU (it runs code compiled for compute_" +
           std::to_string(li.ptx_arch) + "); rebuild with -DCMAKE_CUDA_ARCHITECTURES=" + need;
  }
  if (arch_specific.empty()) return "";
  std::string wanted;
  for (const int a : arch_specific) {
    if (li.arch_specific && li.ptx_arch == a) return "";
    wanted += (wanted.empty() ? "" : " or ") + target_name(a, true);
  }
  return "needs code compiled for " + wanted +
         " (architecture-specific instructions that no other target has); this binary runs " +
         running + " code";
}

/// @brief missing_code_reason() for the image the driver loaded for this GPU.
inline std::string missing_arch_reason(int needed_cc, const std::vector<int>& arch_specific = {}) {
  return missing_code_reason(loaded_image(), needed_cc, arch_specific);
}

}  // namespace tut
