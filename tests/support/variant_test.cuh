/// @file variant_test.cuh
/// @brief GoogleTest helpers for chapter tests: a RunConfig for a test, and one variant run
///        the way the harness runs it (poison, launch, synchronise, verify).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/harness.cuh"

namespace tut_test {

/// @brief A RunConfig for a chapter test on the current device.
/// @param size   the chapter's --size
/// @param seed   the fill seed (each chapter's tests use their own)
/// @param extras the chapter's extra options by name (e.g. {"blocks-per-sm", 1}), if any
inline tut::RunConfig test_config(std::uint64_t size, std::uint64_t seed,
                                  std::map<std::string, long long> extras = {}) {
  tut::RunConfig cfg;
  cfg.size = size;
  cfg.seed = seed;
  cfg.device = tut::query_device();
  cfg.extras = std::move(extras);
  return cfg;
}

/// @brief Builds the Problem for @p cfg and runs the variant @p key of @p variants once, as
///        the harness does (tut::run_and_verify). A missing key is a test failure.
template <class Problem>
tut::VerifyResult run_variant(const tut::RunConfig& cfg,
                              const std::vector<tut::Variant<Problem>>& variants,
                              const std::string& key) {
  for (const auto& v : variants) {
    if (v.key != key) continue;
    Problem p(cfg);
    return tut::run_and_verify(p, v, nullptr);  // a CUDA error exits the test binary with 1
  }
  ADD_FAILURE() << "no variant " << key;
  return {};
}

}  // namespace tut_test
