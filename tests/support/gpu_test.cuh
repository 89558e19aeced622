/// @file gpu_test.cuh
/// @brief GoogleTest helpers for GPU tests: skip (never pass) when the GPU is missing or old.
#pragma once

#include <gtest/gtest.h>

#include "common/arch_probe.cuh"
#include "common/device_info.cuh"

/// @brief Skip the current test unless a GPU of compute capability >= major.minor exists and
///        the test binary holds code for it compiled for at least that architecture.
/// @note GTEST_SKIP() makes CTest report the test as skipped, so a machine without a GPU
///       can never count these tests as passed.
#define SKIP_UNLESS_GPU(major, minor)                                     \
  do {                                                                    \
    std::string tut_reason_ = tut::gpu_missing_reason(major, minor);       \
    if (tut_reason_.empty()) tut_reason_ = tut::missing_arch_reason((major) * 10 + (minor)); \
    if (!tut_reason_.empty()) GTEST_SKIP() << tut_reason_;                \
  } while (0)
