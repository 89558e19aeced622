/// @file fill.hpp
/// @brief Seeded, unique-valued input data (host only).
///
/// Constant inputs hide indexing bugs: a kernel that reads the wrong tile still "passes" if
/// every element is equal. These fills give every element a distinct value, so any element
/// that lands in the wrong place is caught, and they are reproducible from the printed seed.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tut {

/// @brief Sentinel written over outputs before every run. It is a NaN when read as a float,
///        and fill_unique_words never produces it, so an unwritten element always mismatches.
inline constexpr std::uint32_t kPoisonWord = 0xFFFFFFFFu;

/// @brief The poison byte: cudaMemset(ptr, kPoisonByte, bytes) writes kPoisonWord everywhere.
inline constexpr int kPoisonByte = 0xFF;

/// @brief A bijection on 32-bit words (the MurmurHash3 finaliser): distinct in, distinct out.
std::uint32_t mix32(std::uint32_t x);

/// @brief Fill @p dst with @p n pairwise-distinct 32-bit words derived from @p seed.
/// @note Distinct for n <= 2^32 - 1. The value kPoisonWord is never produced.
void fill_unique_words(std::uint32_t* dst, std::size_t n, std::uint64_t seed);

/// @brief Elements per window of fill_unique_exact_floats: its values are distinct within each
///        aligned window of this many elements (4 MiB of floats).
inline constexpr std::size_t kExactFloatsWindow = std::size_t{1} << 20;

/// @brief Fill @p dst with floats that are exact, distinct within every aligned window of
///        kExactFloatsWindow elements, and small enough that sums of up to 16 of them are exact
///        in fp32.
/// @details Each value is a 20-bit permuted integer, centred on zero and scaled by 2^-10, so
///          it lies in [-512, 512) on a 2^-10 grid. Arithmetic chapters can then compare
///          exactly whenever their result is a short integer-weighted sum of inputs.
///          Exact sums and uniqueness pull against each other: 16-term sums stay exact only
///          while every value fits in 20 bits, so there are only 2^20 such values, and a
///          buffer of more than 2^20 floats must repeat some. They never repeat with a
///          period: every window is a different permutation (keyed by the seed and the window
///          index), so for any distance d > 0 only about one element in 2^20 equals the one d
///          elements further on, and a kernel that reads the wrong tile (even one a multiple
///          of 4 MiB away) fails the bit-exact check on nearly every element of it. Where
///          every element must differ from every other, use fill_unique_words.
void fill_unique_exact_floats(float* dst, std::size_t n, std::uint64_t seed);

/// @brief A fresh seed from the clock and the process, for runs without --seed.
std::uint64_t fresh_seed();

}  // namespace tut
