/// @file launch.cuh
/// @brief Grid sizing for the persistent kernels of this tutorial.
///
/// Most chapters launch a persistent grid: a fixed number of blocks per SM, each looping over
/// many tiles, instead of one block per tile. That makes "blocks per SM" a knob the lessons can
/// turn: at full occupancy the warp scheduler hides latency by switching blocks; at one block
/// per SM only the asynchronous copies in flight can hide it.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <tuple>
#include <utility>

#include "cuda_check.cuh"

namespace tut {

/// @brief Dynamic shared memory a kernel may use without opting in (the default limit).
inline constexpr std::size_t kDefaultDynamicSmemLimit = 48 * 1024;

/// @brief Resident blocks per SM for @p kernel at @p threads per block and @p dynamic_smem
///        bytes of dynamic shared memory (what "full occupancy" means for a grid size).
/// @note  Above 48 KiB of dynamic shared memory the answer is 0 until the kernel has opted in
///        (cudaFuncAttributeMaxDynamicSharedMemorySize); persistent_grid() does that first.
template <class Kernel>
int max_blocks_per_sm(Kernel kernel, int threads, std::size_t dynamic_smem = 0) {
  int blocks = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, dynamic_smem));
  return blocks;
}

/// @brief Let @p kernel use @p dynamic_smem bytes of dynamic shared memory (above the 48 KiB
///        default a kernel must opt in). The attribute call runs once per kernel and size and
///        is remembered, so launchers can call this on every launch, timed ones included,
///        without a host query each time.
template <class Kernel>
void opt_in_dynamic_smem(Kernel kernel, std::size_t dynamic_smem) {
  static thread_local std::map<std::pair<const void*, std::size_t>, bool> done;
  if (dynamic_smem <= kDefaultDynamicSmemLimit) return;
  const auto key = std::make_pair(reinterpret_cast<const void*>(kernel), dynamic_smem);
  if (done.count(key)) return;
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  static_cast<int>(dynamic_smem)));
  done[key] = true;
}

/// @brief What the last grid sizing decided, for the result table's "blocks/SM" column.
struct GridChoice {
  unsigned blocks = 0;    ///< grid size
  int blocks_per_sm = 0;  ///< resident blocks per SM (0: not known)
};

/// @brief The last grid chosen by persistent_grid() or reported with record_grid() on this
///        host thread. The harness reads it after a variant's launch to fill its blocks/SM column.
inline GridChoice& last_grid_choice() {
  static thread_local GridChoice choice;
  return choice;
}

/// @brief Report a grid chosen without persistent_grid() (a 2D grid, a cluster launch), so the
///        table can show its blocks per SM.
inline void record_grid(unsigned blocks, int blocks_per_sm) {
  last_grid_choice() = GridChoice{blocks, blocks_per_sm};
}

/// @brief The largest grid a persistent kernel may use right now; 0 means no cap.
/// @note  The harness's lap check sets it (ScopedGridCap) so that, at a check size, every block
///        walks many tiles and every ring wraps around several times: bugs that appear only from
///        the second lap on (a slot refilled while still being read, a parity wrong after
///        wrap-around, a missing proxy fence) then show in `--check-only`, not only in the
///        large timed run.
inline unsigned& grid_cap() {
  static thread_local unsigned cap = 0;
  return cap;
}

/// @brief The grid of the harness's lap check: every variant runs once more at its chapter's
///        largest check size under ScopedGridCap(kLapCheckBlocks).
inline constexpr unsigned kLapCheckBlocks = 2;

/// @brief Complete laps around a ring of @p stages slots made by the least-loaded block when
///        @p grid blocks share @p num_tiles tiles round-robin (block b takes tiles b, b + grid,
///        ...; see tiles_of_this_block in ring.cuh). Chapters' tests assert with it that the lap
///        check, laps_per_block(tiles, kLapCheckBlocks, STAGES) >= 3, wraps every ring.
constexpr unsigned long long laps_per_block(unsigned long long num_tiles, unsigned grid,
                                            unsigned stages) {
  return grid == 0 || stages == 0 ? 0 : num_tiles / grid / stages;
}

/// @brief Sets grid_cap() for a scope and restores the previous value at its end.
class ScopedGridCap {
 public:
  explicit ScopedGridCap(unsigned cap) : previous_(grid_cap()) { grid_cap() = cap; }
  ~ScopedGridCap() { grid_cap() = previous_; }
  ScopedGridCap(const ScopedGridCap&) = delete;
  ScopedGridCap& operator=(const ScopedGridCap&) = delete;

 private:
  unsigned previous_;
};

/// @brief @p grid limited by grid_cap(), rounded down to a multiple of @p multiple (a cluster
///        size) but never below @p multiple. Launchers that size grids without
///        persistent_grid() pass their grid through this.
inline unsigned apply_grid_cap(unsigned grid, unsigned multiple = 1) {
  const unsigned cap = grid_cap();
  if (cap == 0 || grid <= cap) return grid;
  const unsigned capped = cap / multiple * multiple;
  return capped < multiple ? multiple : capped;
}

/// @brief How many blocks of @p kernel (or clusters of @p cluster blocks) can be resident at
///        once, at @p threads threads and @p dynamic_smem bytes of dynamic shared memory: the
///        one occupancy cache of the tutorial. The kernel is opted in to its shared memory
///        first (the query needs that above 48 KiB). Each (kernel, threads, shared memory,
///        cluster) is queried once and remembered, so timed launches do no host queries.
/// @return cluster == 1: resident blocks per SM (cudaOccupancyMaxActiveBlocksPerMultiprocessor);
///         cluster > 1: resident clusters on the whole GPU (cudaOccupancyMaxActiveClusters; a
///         cluster needs its SMs in one GPC, so on a GPU with odd-sized GPCs this is less than
///         SMs / cluster).
template <class Kernel>
int resident_occupancy(Kernel kernel, int threads, std::size_t dynamic_smem, unsigned cluster = 1) {
  struct Key {
    const void* kernel;
    int threads;
    std::size_t smem;
    unsigned cluster;
    bool operator<(const Key& o) const {
      return std::tie(kernel, threads, smem, cluster) <
             std::tie(o.kernel, o.threads, o.smem, o.cluster);
    }
  };
  static thread_local std::map<Key, int> known;
  const Key key{reinterpret_cast<const void*>(kernel), threads, dynamic_smem, cluster};
  const auto it = known.find(key);
  if (it != known.end()) return it->second;
  opt_in_dynamic_smem(kernel, dynamic_smem);
  int fit = 0;
  if (cluster <= 1) {
    fit = max_blocks_per_sm(kernel, threads, dynamic_smem);
  } else {
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(cluster, 1, 1);
    config.blockDim = dim3(static_cast<unsigned>(threads), 1, 1);
    config.dynamicSmemBytes = dynamic_smem;
    CUDA_CHECK(cudaOccupancyMaxActiveClusters(&fit, kernel, &config));
  }
  known.emplace(key, fit);
  return fit;
}

/// @brief Resident clusters of @p cluster blocks of @p kernel on the whole GPU (cached; see
///        resident_occupancy), for a persistent grid of clusters.
template <class Kernel>
int max_active_clusters(Kernel kernel, unsigned cluster, int threads, std::size_t dynamic_smem) {
  return resident_occupancy(kernel, threads, dynamic_smem, cluster);
}

/// @brief Blocks for a persistent grid of @p kernel: @p blocks_per_sm per SM, or as many as fit
///        when it is 0 or more than fit (full occupancy), times @p sm_count; then limited by
///        grid_cap() during the harness's lap check.
/// @param kernel        the kernel to be launched
/// @param threads       its block size
/// @param sm_count      SMs on the device (DeviceInfo::sm_count)
/// @param blocks_per_sm wanted resident blocks per SM; 0 = full occupancy
/// @param dynamic_smem  dynamic shared memory per block in bytes; above 48 KiB the kernel is
///                      opted in here, since the occupancy query needs that first
/// @return the grid size; exits 1 with a message when not even one block fits on an SM
/// @note  The attribute call and the occupancy query run once per (kernel, threads, shared
///        memory) and are remembered, so timed launches (after the warm-ups) do no host queries.
template <class Kernel>
unsigned persistent_grid(Kernel kernel, int threads, int sm_count, int blocks_per_sm = 0,
                         std::size_t dynamic_smem = 0) {
  const int fit = resident_occupancy(kernel, threads, dynamic_smem);  // once per kernel
  if (fit < 1) {
    std::fprintf(stderr,
                 "error: not one block of %d threads with %zu B of dynamic shared memory fits on "
                 "an SM of this GPU\n",
                 threads, dynamic_smem);
    std::exit(kExitCudaError);
  }
  const int per_sm = blocks_per_sm > 0 && blocks_per_sm < fit ? blocks_per_sm : fit;
  const unsigned grid = apply_grid_cap(static_cast<unsigned>(per_sm * sm_count));
  record_grid(grid, per_sm);
  return grid;
}

/// @brief Launch @p kernel with @p args on the grid persistent_grid() chooses: @p threads
///        threads and @p dynamic_smem bytes of dynamic shared memory per block, @p blocks_per_sm
///        blocks per SM (0: as many as fit). For kernels that walk their tiles grid-stride and so
///        are correct for any grid, the lap check's smaller one included.
template <class Kernel, class... Args>
void launch_persistent(Kernel kernel, int threads, std::size_t dynamic_smem, int sm_count,
                       int blocks_per_sm, cudaStream_t s, Args... args) {
  const unsigned grid = persistent_grid(kernel, threads, sm_count, blocks_per_sm, dynamic_smem);
  kernel<<<grid, threads, dynamic_smem, s>>>(args...);
}

/// @brief Launch @p kernel with programmatic dependent launch (PDL) allowed: the launch's
///        stream dependency on the kernel before it in @p s is resolved programmatically, so
///        this grid may be scheduled (its blocks placed on SMs, their prologue run) while the
///        previous kernel is still finishing, instead of after it has completed.
/// @note  The kernel must itself wait, with cudaGridDependencySynchronize()
///        (griddepcontrol.wait, SASS ACQBULK), before its first access to global memory that
///        the previous kernel may write or read: that wait returns once the previous grid has
///        completed and its memory operations are visible, as a kernel boundary would. The
///        previous kernel opens the overlap early only if it calls
///        cudaTriggerProgrammaticLaunchCompletion() (griddepcontrol.launch_dependents, SASS
///        PREEXIT); otherwise each of its blocks counts as triggered when it exits.
template <class... Params, class... Args>
void launch_programmatic(void (*kernel)(Params...), dim3 grid, dim3 block,
                         std::size_t dynamic_smem, cudaStream_t s, Args&&... args) {
  cudaLaunchAttribute attribute = {};
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config = {};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = dynamic_smem;
  config.stream = s;
  config.attrs = &attribute;
  config.numAttrs = 1;
  CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...));
}

}  // namespace tut
