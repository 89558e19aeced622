#include "fill.hpp"

#include <chrono>
#include <random>

namespace tut {

std::uint32_t mix32(std::uint32_t x) {
  // Each step is invertible modulo 2^32 (xor-shift right, multiply by an odd constant),
  // so the whole function is a permutation of the 32-bit words.
  x ^= x >> 16;
  x *= 0x85EBCA6Bu;
  x ^= x >> 13;
  x *= 0xC2B2AE35u;
  x ^= x >> 16;
  return x;
}

namespace {
std::uint32_t seed_offset(std::uint64_t seed) {
  return mix32(static_cast<std::uint32_t>(seed) ^ mix32(static_cast<std::uint32_t>(seed >> 32)));
}
}  // namespace

void fill_unique_words(std::uint32_t* dst, std::size_t n, std::uint64_t seed) {
  const std::uint32_t offset = seed_offset(seed);
  // i + offset is distinct for distinct i < 2^32, and mix32 is a permutation, so all values
  // are distinct. At most one i maps to kPoisonWord; it takes mix32(n + offset) instead,
  // which no other element has.
  for (std::size_t i = 0; i < n; ++i) {
    std::uint32_t v = mix32(static_cast<std::uint32_t>(i) + offset);
    if (v == kPoisonWord) v = mix32(static_cast<std::uint32_t>(n) + offset);
    dst[i] = v;
  }
}

void fill_unique_exact_floats(float* dst, std::size_t n, std::uint64_t seed) {
  constexpr std::uint32_t kBits = 20;
  constexpr std::uint32_t kMask = (1u << kBits) - 1;
  for (std::size_t window_start = 0; window_start < n; window_start += kExactFloatsWindow) {
    // Each window gets its own permutation, keyed by the seed and the window's index, so the
    // values never repeat with a period: an element read from another window (a tile a
    // multiple of 4 MiB away) matches only by chance, about once in 2^20.
    const std::uint64_t window = window_start / kExactFloatsWindow;
    const std::uint32_t offset =
        seed_offset(seed ^ (window * 0x9E3779B97F4A7C15ull)) ^ mix32(static_cast<std::uint32_t>(window));
    const std::uint32_t a = (mix32(offset) | 1u) & kMask;  // odd: invertible modulo 2^20
    const std::uint32_t b = (mix32(offset + 1) | 1u) & kMask;
    const std::size_t end = n - window_start < kExactFloatsWindow ? n : window_start + kExactFloatsWindow;
    for (std::size_t i = window_start; i < end; ++i) {
      // A permutation of [0, 2^20): affine map, xor-shift, multiply, each invertible mod 2^20.
      std::uint32_t x = (static_cast<std::uint32_t>(i) + offset) & kMask;
      x = (x * a + 0x9E37u) & kMask;
      x ^= x >> 10;
      x = (x * b) & kMask;
      dst[i] = (static_cast<float>(x) - static_cast<float>(1u << (kBits - 1))) * (1.0f / 1024.0f);
    }
  }
}

std::uint64_t fresh_seed() {
  std::random_device rd;
  const auto ticks = static_cast<std::uint64_t>(
      std::chrono::high_resolution_clock::now().time_since_epoch().count());
  return (static_cast<std::uint64_t>(rd()) << 32 ^ ticks) % 1000000007ull;
}

}  // namespace tut
