/// @file device_info.cuh
/// @brief Which GPU is this, and is it new enough for the chapter? (the compute-capability gate)
#pragma once

#include <string>

#include "report.hpp"

namespace tut {

/// @brief Exit code for "skipped": no GPU, no driver, or a GPU older than the chapter needs.
///        CTest maps it to Skipped through SKIP_RETURN_CODE.
inline constexpr int kExitSkip = 77;

/// @brief Number of usable GPUs; 0 when there is no GPU or no driver (never an error).
/// @note Without a driver cudaGetDeviceCount returns cudaErrorInsufficientDriver and leaves
///       its argument untouched, so the count is initialised and the sticky error cleared.
int usable_gpu_count();

/// @brief Properties of device 0 (the device every chapter uses).
/// @note Call only when usable_gpu_count() > 0.
DeviceSummary query_device();

/// @brief True when a GPU exists whose compute capability is at least major.minor.
bool gpu_supports(int major, int minor);

/// @brief Why a GPU of at least major.minor is not available ("no CUDA GPU or driver found",
///        or "GPU X is compute capability 8.0; this needs 9.0"); empty when it is.
/// @note The environment variable TUTORIAL_PRETEND_CC (e.g. "7.5") overrides the device's
///       compute capability here, so tests can exercise the "GPU too old" path anywhere.
std::string gpu_missing_reason(int major, int minor);

/// @brief Return device 0's properties, or print the reason and exit 77 when there is no GPU
///        of compute capability >= major.minor.
/// @param major required compute capability, major part (9 for Hopper)
/// @param minor required compute capability, minor part
/// @param what shown in the message, e.g. "chapter 11 (TMA bulk copies)"
DeviceSummary require_cc(int major, int minor, const std::string& what);

/// @brief One line per property, for chapter 00 and the tour log.
std::string describe_device(const DeviceSummary& dev);

}  // namespace tut
