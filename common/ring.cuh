/// @file ring.cuh
/// @brief Ring-buffer bookkeeping for persistent kernels: which tiles a block walks, and which
///        slot and phase of a STAGES-deep ring each of them uses.
///
/// Chapters 04 (cp.async ring) and 11 (TMA ring) teach this arithmetic in their own kernels;
/// later chapters use these helpers, so the ring position is spelled one way.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tut {

/// @brief Tiles a block of a persistent grid owns: it walks tiles blockIdx.x,
///        blockIdx.x + gridDim.x, ... below @p num_tiles.
__device__ __forceinline__ std::size_t tiles_of_this_block(std::size_t num_tiles) {
  return blockIdx.x < num_tiles ? (num_tiles - 1 - blockIdx.x) / gridDim.x + 1 : 0;
}

/// @brief Global index of this block's @p j -th tile (grid-stride walk).
__device__ __forceinline__ std::size_t block_tile(std::size_t j) {
  return blockIdx.x + j * gridDim.x;
}

/// @brief Position in a @p STAGES -deep ring: the slot a tile uses and the parity of that
///        slot's phase. Tile j of a block uses slot j % STAGES in phase j / STAGES; an mbarrier
///        wait names a phase by its parity only, (j / STAGES) & 1, which flips each time the
///        ring wraps around. advance() moves to the next tile.
/// @note  Parity is enough because neither side of a full/empty barrier pair can get a whole
///        lap (two phases) ahead of the other.
template <int STAGES>
struct RingPosition {
  int slot = 0;             ///< ring slot of the current tile, 0 .. STAGES-1
  std::uint32_t phase = 0;  ///< parity of the slot's current phase (0, 1, 0, ...)

  __device__ __forceinline__ void advance() {
    if (++slot == STAGES) {
      slot = 0;
      phase ^= 1u;
    }
  }
};

}  // namespace tut
