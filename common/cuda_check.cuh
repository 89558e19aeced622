/// @file cuda_check.cuh
/// @brief Error-checking macros for the CUDA runtime API, kernel launches and the driver API.
///
/// Every CUDA call in this tutorial goes through one of these macros. On failure they print
/// the failing expression, the error's name and text, and file:line, then exit with code 1
/// (a failed run, never a pass). They are `do { } while (0)` statements, so they behave as a
/// single statement after an `if`, and they are never compiled out (unlike `assert`).
#pragma once

#include <cuda.h>  // CUresult and the driver API types only; nothing here links libcuda
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

namespace tut {

/// @brief Exit code used when a CUDA call fails: the run failed, exactly as a wrong answer.
inline constexpr int kExitCudaError = 1;

/// @brief Print one CUDA runtime error and exit(1). Used by CUDA_CHECK; not called directly.
/// @param err  the error returned by the runtime
/// @param expr the source text of the failing call
/// @param file source file of the call
/// @param line source line of the call
[[noreturn]] inline void fail_cuda(cudaError_t err, const char* expr, const char* file, int line) {
  std::fprintf(stderr, "CUDA error: %s\n  in: %s\n  %s: %s\n  at %s:%d\n", cudaGetErrorName(err),
               expr, cudaGetErrorName(err), cudaGetErrorString(err), file, line);
  std::exit(kExitCudaError);
}

/// @brief Print one CUDA driver API error and exit(1). Used by CU_CHECK; not called directly.
/// @note The driver's own name lookup (cuGetErrorName) would need libcuda at link time, which
///       breaks binaries on machines without a driver, so the numeric code is printed with the
///       few names this tutorial meets.
[[noreturn]] inline void fail_cu(CUresult res, const char* expr, const char* file, int line) {
  const char* name = "CUDA_ERROR_(see cuda.h)";
  switch (res) {
    case CUDA_ERROR_INVALID_VALUE: name = "CUDA_ERROR_INVALID_VALUE"; break;
    case CUDA_ERROR_NOT_SUPPORTED: name = "CUDA_ERROR_NOT_SUPPORTED"; break;
    case CUDA_ERROR_NOT_INITIALIZED: name = "CUDA_ERROR_NOT_INITIALIZED"; break;
    case CUDA_ERROR_INVALID_CONTEXT: name = "CUDA_ERROR_INVALID_CONTEXT"; break;
    default: break;
  }
  std::fprintf(stderr, "CUDA driver error: %s (%d)\n  in: %s\n  at %s:%d\n", name,
               static_cast<int>(res), expr, file, line);
  std::exit(kExitCudaError);
}

}  // namespace tut

/// @brief Check a CUDA runtime API call; on error print expression, name, text, file:line; exit 1.
#define CUDA_CHECK(expr)                                                   \
  do {                                                                     \
    const cudaError_t tut_err_ = (expr);                                   \
    if (tut_err_ != cudaSuccess) tut::fail_cuda(tut_err_, #expr, __FILE__, __LINE__); \
  } while (0)

/// @brief Check the launch that just happened (bad configuration, too much shared memory...).
/// @note A launch returns no status itself: configuration errors are only visible through
///       cudaGetLastError(). Errors inside the kernel surface at the next synchronisation,
///       which CUDA_CHECK(cudaStreamSynchronize(...)) reports.
#define CUDA_CHECK_LAST_LAUNCH() CUDA_CHECK(cudaGetLastError())

/// @brief Check a CUDA driver API call (CUresult), e.g. cuTensorMapEncodeTiled; exit 1 on error.
#define CU_CHECK(expr)                                                   \
  do {                                                                   \
    const CUresult tut_res_ = (expr);                                    \
    if (tut_res_ != CUDA_SUCCESS) tut::fail_cu(tut_res_, #expr, __FILE__, __LINE__); \
  } while (0)
