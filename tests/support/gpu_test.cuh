/// @file gpu_test.cuh
/// @brief GoogleTest helpers for GPU tests: skip (never pass) when the GPU is missing or old.
#pragma once

#include <gtest/gtest.h>

#include "common/device_info.cuh"

/// @brief Skip the current test unless a GPU of compute capability >= major.minor exists.
/// @note GTEST_SKIP() makes CTest report the test as skipped, so a machine without a GPU
///       can never count these tests as passed.
#define SKIP_UNLESS_GPU(major, minor)                                     \
  do {                                                                    \
    const std::string tut_reason_ = tut::gpu_missing_reason(major, minor); \
    if (!tut_reason_.empty()) GTEST_SKIP() << tut_reason_;                \
  } while (0)
