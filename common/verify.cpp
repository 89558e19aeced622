#include "verify.hpp"

#include <cmath>
#include <cstring>
#include <iomanip>
#include <sstream>

namespace tut {

namespace {

std::string hex_word(std::uint32_t w) {
  std::ostringstream os;
  os << "0x" << std::hex << std::setw(8) << std::setfill('0') << w;
  return os.str();
}

std::string float_text(float f) {
  std::uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  std::ostringstream os;
  os << std::setprecision(9) << f << " (" << hex_word(bits) << ")";
  return os.str();
}

void record(VerifyResult& r, std::size_t i, std::string got, std::string want,
            std::size_t max_report) {
  ++r.mismatches;
  if (r.first.size() < max_report) r.first.push_back({i, std::move(got), std::move(want)});
}

}  // namespace

std::string VerifyResult::summary() const {
  std::ostringstream os;
  if (checked == 0) {
    os << "FAIL: nothing was compared";
  } else if (mismatches == 0) {
    os << "PASS: " << checked << " elements, " << what;
  } else {
    os << "FAIL: " << mismatches << " of " << checked << " elements differ (" << what << ")";
  }
  return os.str();
}

std::string VerifyResult::details() const {
  std::ostringstream os;
  for (const Mismatch& m : first)
    os << "  [" << m.index << "] got " << m.got << ", want " << m.want << "\n";
  if (mismatches > first.size()) os << "  ... and " << (mismatches - first.size()) << " more\n";
  return os.str();
}

void VerifyResult::merge(const VerifyResult& other, std::size_t index_offset) {
  checked += other.checked;
  mismatches += other.mismatches;
  for (const Mismatch& m : other.first)
    if (first.size() < kMaxReported) first.push_back({m.index + index_offset, m.got, m.want});
  if (other.max_abs_error > max_abs_error) max_abs_error = other.max_abs_error;
  if (what.empty()) what = other.what;
}

VerifyResult compare_exact_words(const std::uint32_t* got, const std::uint32_t* want,
                                 std::size_t n, std::size_t max_report) {
  VerifyResult r;
  r.what = "bit-exact";
  r.checked = n;
  for (std::size_t i = 0; i < n; ++i)
    if (got[i] != want[i]) record(r, i, hex_word(got[i]), hex_word(want[i]), max_report);
  return r;
}

VerifyResult compare_exact_floats(const float* got, const float* want, std::size_t n,
                                  std::size_t max_report) {
  VerifyResult r;
  r.what = "bit-exact";
  r.checked = n;
  for (std::size_t i = 0; i < n; ++i) {
    if (std::memcmp(&got[i], &want[i], sizeof(float)) != 0 || std::isnan(got[i]))
      record(r, i, float_text(got[i]), float_text(want[i]), max_report);
  }
  return r;
}

VerifyResult compare_exact_bytes(const void* got, const void* want, std::size_t n_elems,
                                 std::size_t elem_bytes, std::size_t max_report) {
  VerifyResult r;
  r.what = "byte-exact";
  r.checked = n_elems;
  const auto* g = static_cast<const unsigned char*>(got);
  const auto* w = static_cast<const unsigned char*>(want);
  for (std::size_t i = 0; i < n_elems; ++i) {
    if (std::memcmp(g + i * elem_bytes, w + i * elem_bytes, elem_bytes) == 0) continue;
    // Show the first differing word of the record.
    std::size_t off = 0;
    while (off < elem_bytes && g[i * elem_bytes + off] == w[i * elem_bytes + off]) ++off;
    std::ostringstream gs, ws;
    gs << "byte " << off << " = 0x" << std::hex << int(g[i * elem_bytes + off]);
    ws << "0x" << std::hex << int(w[i * elem_bytes + off]);
    record(r, i, gs.str(), ws.str(), max_report);
  }
  return r;
}

VerifyResult compare_close_floats(const float* got, const float* want, std::size_t n,
                                  double abs_tol, double rel_tol, std::size_t max_report) {
  VerifyResult r;
  std::ostringstream what;
  what << "|err| <= " << abs_tol << " + " << rel_tol << "*|want|";
  r.what = what.str();
  r.checked = n;
  for (std::size_t i = 0; i < n; ++i) {
    const double g = got[i], w = want[i];
    if (!std::isfinite(g)) {
      record(r, i, float_text(got[i]), float_text(want[i]), max_report);
      continue;
    }
    const double err = std::fabs(g - w);
    if (err > r.max_abs_error) r.max_abs_error = err;
    if (err > abs_tol + rel_tol * std::fabs(w))
      record(r, i, float_text(got[i]), float_text(want[i]), max_report);
  }
  return r;
}

}  // namespace tut
