/// @file wait_record.hpp
/// @brief What a bounded wait that gave up records (who waited on what), and the one sentence
///        the host prints for it. Plain C++ so the formatting is unit-tested without a GPU.
///
/// A kernel whose bounded mbarrier wait gives up (bounded_wait.cuh) writes one WaitRecord per
/// warp into its error log; the host reads the log back and prints one sentence per distinct
/// wait, for example
///
///     consumer warpgroup 2 of block 17 timed out on full[3] waiting for parity 1 at k-tile 9
///     (expect_tx 49152 bytes)
///
/// "Distinct" means the same role, barrier, slot, parity and iteration: when 132 blocks all
/// stall at the same place, the sentence is printed once, with the number of others.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tut {

/// @brief Who waited: the warp's role in the kernel's protocol.
enum class WaitRole : std::uint8_t {
  kWarp = 0,               ///< a warp of a kernel without separate roles
  kProducerWarp,           ///< the warp that issues the copies
  kConsumerWarp,           ///< a warp that reads what the copies delivered
  kProducerWarpgroup,      ///< the producer warpgroup (4 warps) of a warp-specialised kernel
  kConsumerWarpgroup,      ///< a consumer warpgroup
};

/// @brief Which barrier of the protocol it waited on (the names the lessons use).
enum class Barrier : std::uint8_t {
  kFull = 0,   ///< "slot s holds data": completed by the copy (transaction bytes) or producer
  kEmpty,      ///< "slot s may be refilled": completed by the consumers' releases
  kTile,       ///< a single-tile barrier (no ring)
  kReady,      ///< a cluster peer's "my slot is ready"
  kConsumed,   ///< a cluster peer's "I have read your slot"
  kDone,       ///< "the whole block's work is done" (teardown)
  kStore,      ///< the barrier guarding a staging buffer for a store
  kCluster,    ///< a cluster-wide hand-off barrier
  kPartial,    ///< a flag in global memory: "my partial tile is written" (chapter 16's stream-K)
};

/// @brief What the iteration counter of a record counts.
enum class WaitStep : std::uint8_t {
  kNone = 0,   ///< no iteration recorded
  kTile,       ///< the block's tile (printed "tile 9")
  kKTile,      ///< the k-tile of a GEMM main loop ("k-tile 9")
  kStep,       ///< any other loop counter ("step 9")
};

/// @brief One timed-out wait, as the device writes it (32 bytes, no padding surprises).
struct WaitRecord {
  std::uint32_t block;       ///< linear block index in the grid
  std::uint32_t step;        ///< the iteration (see step_kind)
  std::uint32_t expect_tx;   ///< bytes the barrier's phase expected; 0: not a transaction wait
  std::uint32_t slot;        ///< ring slot (index into the barrier array)
  std::uint16_t warp;        ///< warp index in the block
  WaitRole role;
  std::uint8_t role_index;   ///< which warp / warpgroup of that role
  Barrier barrier;
  WaitStep step_kind;
  std::uint8_t parity;       ///< the phase parity it waited for
  std::uint8_t has_slot;     ///< 1: print barrier[slot]; 0: the barrier is not an array
  std::uint32_t reserved[2];
};
static_assert(sizeof(WaitRecord) == 32, "WaitRecord is copied raw from the device");

/// @brief The device-side error log every kernel with bounded waits takes (as `unsigned*`,
///        pointing at `word`). `word` is the ErrorWord of the earlier chapters: 0 when every wait
///        completed, kErrorWaitTimedOut (and other bits) otherwise.
struct WaitLog {
  static constexpr unsigned kCapacity = 16;  ///< records kept; later timeouts are only counted
  unsigned word;                             ///< OR of the error bits
  unsigned count;                            ///< warps that timed out (may exceed kCapacity)
  unsigned reserved[6];
  WaitRecord records[kCapacity];
};

/// @brief "consumer warpgroup 2" / "producer warp 0" / "warp 5": the role as the sentence says it.
std::string describe_role(const WaitRecord& r);
/// @brief "full[3]" or "tile".
std::string describe_barrier(const WaitRecord& r);
/// @brief The sentence for one record (no trailing newline).
std::string describe_timeout(const WaitRecord& r);
/// @brief One sentence per distinct wait among the first min(count, kCapacity) records, each
///        followed by how many other warps timed out at the same place, plus a last line when
///        more warps timed out than the log kept.
std::vector<std::string> describe_timeouts(const WaitLog& log);

}  // namespace tut
