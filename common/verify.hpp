/// @file verify.hpp
/// @brief Compare a kernel's output with the CPU reference (host only).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tut {

/// @brief One wrong element, already formatted for printing.
struct Mismatch {
  std::size_t index;
  std::string got;
  std::string want;
};

/// @brief Outcome of a comparison: counts, the first few mismatches, and the worst error.
struct VerifyResult {
  std::size_t checked = 0;          ///< elements compared
  std::size_t mismatches = 0;       ///< elements that differ (NaN always differs)
  std::vector<Mismatch> first;      ///< the first max_report mismatches, in index order
  double max_abs_error = 0.0;       ///< largest |got - want| over finite pairs (tolerant compare)
  std::string what;                 ///< e.g. "exact" or "abs 1e-3 + rel 1e-5"

  /// @brief True when every element matched.
  bool ok() const { return mismatches == 0 && checked > 0; }
  /// @brief One line: "PASS: 1048576 elements, exact" or "FAIL: 3 of 1048576 ...".
  std::string summary() const;
  /// @brief The first mismatches, one per line ("  [index] got X want Y").
  std::string details() const;
  /// @brief Fold another result in (e.g. several buffers or sizes of one run).
  void merge(const VerifyResult& other, std::size_t index_offset = 0);
};

/// @brief Default number of mismatches listed.
inline constexpr std::size_t kMaxReported = 10;

/// @brief Bit-exact comparison of 32-bit words (copies: every bit must arrive).
VerifyResult compare_exact_words(const std::uint32_t* got, const std::uint32_t* want,
                                 std::size_t n, std::size_t max_report = kMaxReported);

/// @brief Bit-exact comparison of floats, printed as floats. A NaN in @p got never passes.
VerifyResult compare_exact_floats(const float* got, const float* want, std::size_t n,
                                  std::size_t max_report = kMaxReported);

/// @brief Byte-exact comparison of arrays of @p elem_bytes-sized records (structs).
VerifyResult compare_exact_bytes(const void* got, const void* want, std::size_t n_elems,
                                 std::size_t elem_bytes, std::size_t max_report = kMaxReported);

/// @brief Tolerant float comparison: passes when |got - want| <= abs_tol + rel_tol * |want|.
/// @note NaN or infinity in @p got fails, whatever the tolerance.
VerifyResult compare_close_floats(const float* got, const float* want, std::size_t n,
                                  double abs_tol, double rel_tol,
                                  std::size_t max_report = kMaxReported);

}  // namespace tut
