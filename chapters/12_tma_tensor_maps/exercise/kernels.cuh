// EXERCISE for chapter 12_tma_tensor_maps, generated from ../kernels.cuh by tools/make_exercise.py.
// Fill in every TODO(exercise) until `chNN_topic_exercise` reports PASS.
// Chapter 12: TMA tensor maps (2D) - the copy engine understands rows, strides and edges
//
// What it adds over chapter 11: a 1D bulk copy moves one contiguous run of bytes. A 2D tile of
// a matrix is 32 separate runs, one per row. A *tensor map* (CUtensorMap, 128 bytes, built on
// the host with cuTensorMapEncodeTiled) describes the whole matrix: base address, sizes,
// row pitch, the box (tile) shape, the shared-memory swizzle and what to fill outside the
// matrix. One thread then asks for "the box at (x, y)" with cp.async.bulk.tensor.2d (SASS
// UTMALDG.2D) and the TMA unit walks the rows, clips at the matrix edges (filling zeros),
// and writes the box into shared memory, swizzled if asked. The reverse, shared -> global,
// is the TMA store (UTMASTG), which clips the box at the edges too.
//
// Workload: out = transpose(in) for an N x N float matrix (N a multiple of 4: the 16-byte
// row-pitch rule), in 32 x 32 tiles. Tile (ty, tx) of `in` becomes tile (tx, ty) of `out`.
// The transpose makes threads read the tile by COLUMN, which is where bank conflicts and
// swizzling matter. v4-v6 read the swizzled box along ROWS instead (conflict-free LDS.128)
// and v5/v6 use taller boxes (128 or 256 rows x 32 columns) so each output row receives
// longer contiguous writes: they test why v0-v3 stop near 75% of the copy ceiling.
//
// Minimum compute capability: 9.0 (TMA). The driver function cuTensorMapEncodeTiled is
// fetched at run time with cudaGetDriverEntryPointByVersion, so the binary does not link
// libcuda and still starts (and skips) on a machine without a driver.
// Run:    build/bin/ch12_tma_tensor_maps [--size=N] [--blocks-per-sm=N] [--list]
// Output: the harness table; --size is the matrix side N (default 16384: 1 GiB per matrix).
#pragma once

#include <cuda.h>  // CUtensorMap and its enums (types only: nothing here links libcuda)
#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled_v12000
#include <cuda/ptx>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "chapters/11_tma_bulk_copies/ring_helpers.cuh"  // from the root: the exercise finds it
#include "common/device_buffer.cuh"
#include "common/harness.cuh"

namespace ch12 {

// From chapter 11 (ring_helpers.cuh): shared-window addresses, the grid-stride walk and ring
// phases, the 'full' barriers' initialisation, the bounded wait, and the host-side error word,
// check and registry.
using ch11::block_tile;
using ch11::compare_words_and_error;
using ch11::describe_timeout;
using ch11::ErrorWord;
using ch11::init_full_barriers;
using ch11::ring_parity;
using ch11::smem_addr;
using ch11::tiles_of_this_block;
using ch11::VariantList;
using ch11::wait_parity_bounded;

// ---------------------------------------------------------------------------------------------
// Constants
// ---------------------------------------------------------------------------------------------
constexpr int THREADS = 256;
constexpr int WARPS = THREADS / 32;
constexpr int TILE = 32;                          // 32 x 32 floats = 4 KiB per tile (the box)
constexpr int TILE_BYTES = TILE * TILE * 4;
constexpr int STAGES = 8;                         // ring of 8 boxes = 32 KiB in flight per block
constexpr int CPA_PITCH = TILE + 4;               // v0: padded row, 144 B (16 B aligned for cp.async)
constexpr int SMEM_ALIGN = 1024;                  // 128-byte swizzle repeats every 1024 bytes
constexpr unsigned kErrTimeout = 1u;              // a bounded wait (chapter 11) gave up

// ---------------------------------------------------------------------------------------------
// Host: the tensor-map rules, and the encoder fetched from the driver at run time
// ---------------------------------------------------------------------------------------------
// Rules for a FLOAT32 2D tiled map (cuda.h, cuTensorMapEncodeTiled), checked here so a
// violation is a clear sentence instead of CUDA_ERROR_INVALID_VALUE:
//   - global address 16-byte aligned;
//   - global stride (row pitch, bytes) a multiple of 16 and < 2^40: N floats per row -> N % 4;
//   - box dimensions 1..256 elements, and the box's inner extent a multiple of 16 bytes;
//   - with a swizzle, the box's inner extent at most the swizzle span (32, 64 or 128 bytes).
inline std::string tensor_map_violation(const void* base, std::uint64_t cols, std::uint64_t rows,
                                        std::uint32_t box_cols, std::uint32_t box_rows,
                                        CUtensorMapSwizzle swizzle) {
  if (reinterpret_cast<std::uintptr_t>(base) % 16 != 0)
    return "the matrix base address is not 16-byte aligned";
  if (cols == 0 || rows == 0 || cols > (1ull << 32) || rows > (1ull << 32))
    return "matrix dimensions must be 1..2^32";
  if ((cols * 4) % 16 != 0)
    return "the row pitch is " + std::to_string(cols * 4) +
           " bytes; TMA needs a global stride that is a multiple of 16 bytes (here: columns a "
           "multiple of 4)";
  if (box_cols == 0 || box_rows == 0 || box_cols > 256 || box_rows > 256)
    return "box dimensions must be 1..256 elements";
  if ((box_cols * 4) % 16 != 0) return "the box's inner extent must be a multiple of 16 bytes";
  const std::uint32_t span = swizzle == CU_TENSOR_MAP_SWIZZLE_32B   ? 32
                             : swizzle == CU_TENSOR_MAP_SWIZZLE_64B  ? 64
                             : swizzle == CU_TENSOR_MAP_SWIZZLE_128B ? 128
                                                                     : 0;
  if (span != 0 && box_cols * 4 > span)
    return "the box's inner extent (" + std::to_string(box_cols * 4) +
           " bytes) exceeds the swizzle span (" + std::to_string(span) + " bytes)";
  return "";
}

// cuTensorMapEncodeTiled lives in libcuda. Asking the runtime for the entry point (by the
// ABI version the typedef was written for, 12.0) avoids linking libcuda at build time.
inline PFN_cuTensorMapEncodeTiled_v12000 encode_tiled_fn() {
  static PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult found{};
    CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000,
                                                cudaEnableDefault, &found));
    if (found != cudaDriverEntryPointSuccess || p == nullptr) {
      std::fprintf(stderr, "ch12: error: the driver has no cuTensorMapEncodeTiled (12.0)\n");
      std::exit(tut::kExitFail);
    }
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p);
  }();
  return fn;
}

/// A row-major rows x cols float matrix at `base`, read or written in TILE x TILE boxes.
/// Coordinates are innermost first: dimension 0 = column (x), dimension 1 = row (y).
/// `box_rows` (default TILE) makes a taller box: TILE columns x box_rows rows (v5, v6).
inline CUtensorMap make_tile_map(const float* base, std::uint64_t cols, std::uint64_t rows,
                                 CUtensorMapSwizzle swizzle, std::uint32_t box_rows = TILE) {
  const std::string why = tensor_map_violation(base, cols, rows, TILE, box_rows, swizzle);
  if (!why.empty()) {
    std::fprintf(stderr, "ch12: error: cannot describe this matrix to the TMA unit: %s\n",
                 why.c_str());
    std::exit(tut::kExitFail);
  }
  CUtensorMap map;
  const cuuint64_t dims[2] = {cols, rows};
  const cuuint64_t strides[1] = {cols * sizeof(float)};  // bytes from one row to the next
  const cuuint32_t box[2] = {TILE, box_rows};
  const cuuint32_t elem_strides[2] = {1, 1};
  CU_CHECK(encode_tiled_fn()(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, const_cast<float*>(base),
                             dims, strides, box, elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                             swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                             CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));  // outside: zeros
  return map;
}

// ---------------------------------------------------------------------------------------------
// Device helpers
// ---------------------------------------------------------------------------------------------
// Dynamic shared memory rounded up to SMEM_ALIGN (the launch asks for SMEM_ALIGN extra bytes).
// The 128-byte swizzle XORs address bits [4:6] with bits [7:9]; our index math assumes a box
// starts on a 1024-byte boundary, so that bits [7:9] are the row number mod 8.
__device__ inline unsigned char* aligned_dynamic_smem() {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const std::uint32_t a = smem_addr(smem_raw);
  return smem_raw + ((SMEM_ALIGN - a % SMEM_ALIGN) % SMEM_ALIGN);
}

// Element (r, c) of a 32 x 32 float box as the TMA unit lays it out with SWIZZLE_128B:
// row r occupies bytes [128 r, 128 r + 128); inside it the 16-byte chunk c / 4 is moved to
// chunk (c / 4) ^ (r % 8). A column read (fixed c, r = lane) then touches 8 different 16-byte
// chunks, i.e. 4-way bank conflicts instead of 32-way.
__device__ inline int swizzled_128b(int r, int c) {
  // TODO(exercise): return the float index of element (r, c): row r starts at r * TILE; its 16-byte chunk c / 4 was moved to chunk (c / 4) ^ (r % 8); c % 4 stays the position inside the chunk
  return r * TILE + c;  // the dense (unswizzled) layout: wrong for SWIZZLE_128B
}

// The N x N matrix cut into boxes of BOX_ROWS rows x TILE columns (v0-v3: 32 x 32; v5, v6:
// taller), numbered row-major: consecutive tiles are neighbours along a tile row.
template <int BOX_ROWS = TILE>
struct TileGrid {
  int n, tiles_x, tiles_y;
  std::size_t num_tiles;
  __host__ __device__ TileGrid(int n_)
      : n(n_), tiles_x((n_ + TILE - 1) / TILE), tiles_y((n_ + BOX_ROWS - 1) / BOX_ROWS) {
    num_tiles = static_cast<std::size_t>(tiles_x) * tiles_y;
  }
  __device__ int row0(std::size_t tile) const {
    return static_cast<int>(tile / tiles_x) * BOX_ROWS;
  }
  __device__ int col0(std::size_t tile) const { return static_cast<int>(tile % tiles_x) * TILE; }
};

// Every consumer waits for its slot's phase; whether to go on is decided block-wide
// (__syncthreads_or), so when a wait gives up the whole block returns together and nobody is
// left at a later __syncthreads. Thread 0 records the timeout. false: give up.
__device__ inline bool block_wait_parity_bounded(std::uint64_t* bar, std::uint32_t parity,
                                                 unsigned* d_error) {
  const bool landed = wait_parity_bounded(bar, parity);
  if (!__syncthreads_or(!landed)) return true;
  if (threadIdx.x == 0) atomicOr(d_error, kErrTimeout);
  return false;
}

// The consumer step shared by every variant: write the transposed tile to global memory.
// Warp w owns output rows c = w, w+8, w+16, w+24 of the out tile; lane = output column r.
// Each warp store is 32 consecutive floats (one 128-byte line): coalesced. `at(r, c)` says
// where input element (r, c) of the tile sits in shared memory.
template <class At>
__device__ inline void store_transposed(float* __restrict__ d_out, int n, int r0, int c0, At at) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
#pragma unroll
  for (int k = 0; k < TILE / WARPS; ++k) {
    const int c = warp + k * WARPS;
    if (c0 + c < n && r0 + lane < n)
      d_out[static_cast<std::size_t>(c0 + c) * n + r0 + lane] = at(lane, c);  // out[c][r]
  }
}

// ---------------------------------------------------------------------------------------------
// v0: the same transpose fed by cp.async (one 16-byte LDGSTS per thread per tile)
// ---------------------------------------------------------------------------------------------
// The cp.async way of loading a 2D tile: 256 threads x 16 B, each computing its own global
// address and its own bounds check (row < n, column < n; n % 4 == 0 keeps a 16-byte chunk
// all-in or all-out). Rows are padded to 36 floats so the column reads conflict 4-way only.
__global__ void __launch_bounds__(THREADS)
    transpose_v0_cpasync_kernel(const float* __restrict__ d_in, float* __restrict__ d_out,
                                int n) {
  __shared__ alignas(16) float s_ring[STAGES][TILE][CPA_PITCH];  // 8 x [32][36] floats
  const TileGrid<> g(n);
  const std::size_t my_tiles = tiles_of_this_block(g.num_tiles);
  const int t = threadIdx.x, row = t / 8, chunk = t % 8;  // [32 rows x 8 chunks of 16 B]
  auto issue = [&](std::size_t j) {
    if (j < my_tiles) {
      const std::size_t tile = block_tile(j);
      const int r = g.row0(tile) + row, c = g.col0(tile) + chunk * 4;
      if (r < n && c < n)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(
                         smem_addr(&s_ring[j % STAGES][row][chunk * 4])),
                     "l"(d_in + static_cast<std::size_t>(r) * n + c)
                     : "memory");
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
  };
  for (int j = 0; j < STAGES - 1; ++j) issue(j);  // prologue
  for (std::size_t j = 0; j < my_tiles; ++j) {    // steady state
    issue(j + STAGES - 1);
    asm volatile("cp.async.wait_group %0;" ::"n"(STAGES - 1) : "memory");  // my part of tile j
    __syncthreads();                                                       // everyone's
    const std::size_t tile = block_tile(j);
    float(*s)[CPA_PITCH] = s_ring[j % STAGES];
    store_transposed(d_out, n, g.row0(tile), g.col0(tile), [&](int r, int c) { return s[r][c]; });
    __syncthreads();  // slot consumed before it is refilled
  }
  asm volatile("cp.async.wait_all;" ::: "memory");
}

// ---------------------------------------------------------------------------------------------
// v1: TMA tensor loads in raw PTX, no swizzle
// ---------------------------------------------------------------------------------------------
// One thread per block issues `cp.async.bulk.tensor.2d` for a whole 32 x 32 box. Edges: the
// TMA unit clips the box against the matrix and fills the outside with zeros; it still
// delivers (and counts on the mbarrier) the FULL box, 4096 bytes, so expect_tx is constant.
// Without swizzle the box is dense, 128 bytes per row: a column read hits one bank 32 times
// (32-way conflict) - and there is no padding knob. v2 fixes that with a swizzle.
// Ring protocol: full[s] (count 1 + tx bytes) says "slot s holds tile j" (parity (j/STAGES)&1);
// slots are released by a __syncthreads (chapter 11, v3), after which thread 0 refills.
__device__ inline void ptx_tensor_load_2d(void* dst, const CUtensorMap* map, int x, int y,
                                          std::uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];"
      ::"r"(smem_addr(dst)), "l"(reinterpret_cast<std::uint64_t>(map)), "r"(x), "r"(y),
        "r"(smem_addr(bar))
      : "memory");
}

__global__ void __launch_bounds__(THREADS)
    transpose_v1_tma_ptx_kernel(const __grid_constant__ CUtensorMap map_in,
                                float* __restrict__ d_out, int n, unsigned* d_error) {
  float* s_ring = reinterpret_cast<float*>(aligned_dynamic_smem());  // [STAGES][32][32]
  __shared__ __align__(8) std::uint64_t full[STAGES];
  const TileGrid<> g(n);
  const std::size_t my_tiles = tiles_of_this_block(g.num_tiles);
  const int t = threadIdx.x;
  if (t == 0) {
    for (int s = 0; s < STAGES; ++s)
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(&full[s]))
                   : "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // init -> async proxy
  }
  __syncthreads();
  auto produce = [&](std::size_t j) {
    const int s = static_cast<int>(j % STAGES);
    const std::size_t tile = block_tile(j);
    asm volatile("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [%0], %1;"
                 ::"r"(smem_addr(&full[s])), "r"(TILE_BYTES) : "memory");
    ptx_tensor_load_2d(s_ring + s * TILE * TILE, &map_in, g.col0(tile), g.row0(tile), &full[s]);
  };
  if (t == 0)
    for (std::size_t j = 0; j < my_tiles && j < STAGES; ++j) produce(j);  // prologue
  for (std::size_t j = 0; j < my_tiles; ++j) {                            // steady state
    const int s = static_cast<int>(j % STAGES);
    if (!block_wait_parity_bounded(&full[s], ring_parity<STAGES>(j), d_error)) return;
    const std::size_t tile = block_tile(j);
    const float* box = s_ring + s * TILE * TILE;  // slot s holds tile j, dense [32][32]
    store_transposed(d_out, n, g.row0(tile), g.col0(tile),
                     [&](int r, int c) { return box[r * TILE + c]; });
    __syncthreads();  // slot s consumed
    if (t == 0 && j + STAGES < my_tiles) produce(j + STAGES);
  }
}

// ---------------------------------------------------------------------------------------------
// v2: the same with cuda::ptx and a 128-byte swizzle (conflicts 32-way -> 4-way)
// ---------------------------------------------------------------------------------------------
// cp.async.bulk.tensor.2d.shared::cta.global... -> cuda::ptx::cp_async_bulk_tensor(
//     space_shared, space_global, dst, &map, {x, y}, bar)
// The swizzle is a property of the tensor map (CU_TENSOR_MAP_SWIZZLE_128B), not of the
// instruction; the kernel only has to read through swizzled_128b(). SWAP_COORDS = true is the
// negative variant v9: coordinates given as {row, col} instead of innermost-first {col, row}.
//
// The producer step of v2-v4 (thread 0): one arrival on `bar` that also expects the box's
// bytes - the WHOLE box, since the TMA unit zero-fills what lies outside the matrix - then the
// TMA load of the box whose first element is column x, row y, into `dst`.
__device__ inline void load_box(float* dst, const CUtensorMap* map, std::int32_t x, std::int32_t y,
                                std::uint64_t* bar, std::uint32_t box_bytes) {
  namespace ptx = cuda::ptx;
  const std::int32_t coords[2] = {x, y};  // innermost (column) first
  (void)ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, bar,
                                       box_bytes);
  ptx::cp_async_bulk_tensor(ptx::space_shared, ptx::space_global, dst, map, coords, bar);
}

template <bool SWAP_COORDS>
__global__ void __launch_bounds__(THREADS)
    transpose_v2_tma_swizzle_kernel(const __grid_constant__ CUtensorMap map_in_sw128,
                                    float* __restrict__ d_out, int n, unsigned* d_error) {
  float* s_ring = reinterpret_cast<float*>(aligned_dynamic_smem());  // [STAGES][32][32] swizzled
  __shared__ __align__(8) std::uint64_t full[STAGES];
  const TileGrid<> g(n);
  const std::size_t my_tiles = tiles_of_this_block(g.num_tiles);
  const int t = threadIdx.x;
  init_full_barriers<STAGES>(full);  // count 1 each, fenced for the TMA unit (as in v1)
  auto produce = [&](std::size_t j) {
    const int s = static_cast<int>(j % STAGES);
    const std::size_t tile = block_tile(j);
    const std::int32_t x = g.col0(tile), y = g.row0(tile);
    load_box(s_ring + s * TILE * TILE, &map_in_sw128, SWAP_COORDS ? y : x, SWAP_COORDS ? x : y,
             &full[s], TILE_BYTES);
  };
  if (t == 0)
    for (std::size_t j = 0; j < my_tiles && j < STAGES; ++j) produce(j);
  for (std::size_t j = 0; j < my_tiles; ++j) {
    const int s = static_cast<int>(j % STAGES);
    if (!block_wait_parity_bounded(&full[s], ring_parity<STAGES>(j), d_error)) return;
    const std::size_t tile = block_tile(j);
    const float* box = s_ring + s * TILE * TILE;  // slot s holds tile j, swizzled
    store_transposed(d_out, n, g.row0(tile), g.col0(tile),
                     [&](int r, int c) { return box[swizzled_128b(r, c)]; });
    __syncthreads();
    if (t == 0 && j + STAGES < my_tiles) produce(j + STAGES);
  }
}

// ---------------------------------------------------------------------------------------------
// v4-v6: swizzled box read WITHOUT conflicts (LDS.128 along a row), and taller boxes
// ---------------------------------------------------------------------------------------------
// Why v0/v2 stop near 75% of the ceiling is studied in the README; these variants test the
// two suspects one at a time.
//
// 1. Shared-memory reads. v2 reads a COLUMN of the box with scalar LDS.32: 4-way conflicts,
//    4 wavefronts per 128 bytes. Here a lane reads a 16-byte chunk of a ROW instead: lane l
//    takes chunk k of box row r = 32 g + l (LDS.128). With SWIZZLE_128B, chunk k of row r sits
//    at chunk k ^ (r % 8); the 8 lanes of a quarter-warp (r % 8 = 0..7) hit 8 different chunks
//    = all 32 banks: conflict-free, 4 wavefronts per 512 bytes (the minimum). The 4 floats a
//    lane holds are in[r][4k..4k+3] = out[4k+i][r], so the warp writes 4 output rows, each 32
//    consecutive floats (r = lane): 4 coalesced 128-byte STG.32, as before.
// 2. The write pattern. Tiles are walked row-major (consecutive blocks take neighbouring tiles
//    of one tile row), so the reads of concurrent blocks are neighbours in memory, but each
//    32 x 32 tile writes 32 output rows with only 128 contiguous bytes per row: the output is
//    written as 128-byte pieces 4*N bytes apart. A box of BOX_ROWS x 32 (v5: 128, v6: 256)
//    writes BOX_ROWS * 4 contiguous bytes per output row (512 B, 1 KiB) instead.
// The ring protocol is v2's (full[s] + tx bytes; slots released by __syncthreads).
// expect_tx is the whole box, BOX_ROWS x 128 bytes, at the edges too (TMA zero-fills).
template <int BOX_ROWS, int RING>
__global__ void __launch_bounds__(THREADS)
    transpose_v4_tma_rowread_kernel(const __grid_constant__ CUtensorMap map_in_sw128,
                                    float* __restrict__ d_out, int n, unsigned* d_error) {
  static_assert(BOX_ROWS % 32 == 0 && BOX_ROWS <= 256, "whole 32-row groups, TMA box <= 256");
  constexpr int BOX_FLOATS = BOX_ROWS * TILE;
  constexpr std::uint32_t BOX_BYTES = BOX_FLOATS * 4;  // a multiple of 1024: slots stay aligned
  constexpr int UNITS = BOX_ROWS / 32 * (TILE / 4);    // (32-row group, 16-byte chunk) pairs
  float* s_ring = reinterpret_cast<float*>(aligned_dynamic_smem());  // [RING][BOX_ROWS][32]
  __shared__ __align__(8) std::uint64_t full[RING];
  const TileGrid<BOX_ROWS> g(n);
  const std::size_t my_tiles = tiles_of_this_block(g.num_tiles);
  const int t = threadIdx.x, lane = t % 32, warp = t / 32;
  init_full_barriers<RING>(full);
  auto produce = [&](std::size_t j) {
    const int s = static_cast<int>(j % RING);
    const std::size_t tile = block_tile(j);
    load_box(s_ring + s * BOX_FLOATS, &map_in_sw128, g.col0(tile), g.row0(tile), &full[s],
             BOX_BYTES);
  };
  if (t == 0)
    for (std::size_t j = 0; j < my_tiles && j < RING; ++j) produce(j);  // prologue
  for (std::size_t j = 0; j < my_tiles; ++j) {                          // steady state
    const int s = static_cast<int>(j % RING);
    if (!block_wait_parity_bounded(&full[s], ring_parity<RING>(j), d_error)) return;
    const std::size_t tile = block_tile(j);
    const int r0 = g.row0(tile), c0 = g.col0(tile);
    const float* box = s_ring + s * BOX_FLOATS;  // slot s holds tile j, 128B-swizzled rows
#pragma unroll
    for (int u = warp; u < UNITS; u += WARPS) {
      const int r = (u / (TILE / 4)) * 32 + lane, k = u % (TILE / 4);
      // TODO(exercise): read chunk k of box row r through the 128-byte swizzle (one float4, conflict-free), then write its 4 floats to output rows c0 + 4k + i, column r0 + r (skip what lies outside the N x N matrix)
      (void)box, (void)r, (void)k;  // delete once your code uses them
    }
    __syncthreads();  // slot s consumed
    if (t == 0 && j + RING < my_tiles) produce(j + RING);
  }
}

// ---------------------------------------------------------------------------------------------
// v3: TMA load (swizzled) + transpose in shared memory + TMA store
// ---------------------------------------------------------------------------------------------
// Threads write the transposed tile into a dense [32][32] staging box (lane = column: no
// conflicts), fence.proxy.async (generic writes -> async proxy, chapter 11's rule), barrier,
// then thread 0 issues cp.async.bulk.tensor.2d.global.shared::cta (UTMASTG) at out-tile
// coordinates (x = r0, y = c0). The TMA store clips the box at the matrix edges: no bounds
// checks in the kernel at all. Two staging boxes alternate; wait_group.read 1 frees the older.
__global__ void __launch_bounds__(THREADS)
    transpose_v3_tma_store_kernel(const __grid_constant__ CUtensorMap map_in_sw128,
                                  const __grid_constant__ CUtensorMap map_out, int n,
                                  unsigned* d_error) {
  namespace ptx = cuda::ptx;
  float* s_ring = reinterpret_cast<float*>(aligned_dynamic_smem());  // [STAGES][32][32] swizzled
  float* s_out = s_ring + STAGES * TILE * TILE;                       // [2][32][32] dense
  __shared__ __align__(8) std::uint64_t full[STAGES];
  const TileGrid<> g(n);
  const std::size_t my_tiles = tiles_of_this_block(g.num_tiles);
  const int t = threadIdx.x, lane = t % 32, warp = t / 32;
  init_full_barriers<STAGES>(full);  // count 1 each, fenced for the TMA unit (as in v1)
  auto produce = [&](std::size_t j) {
    const int s = static_cast<int>(j % STAGES);
    const std::size_t tile = block_tile(j);
    load_box(s_ring + s * TILE * TILE, &map_in_sw128, g.col0(tile), g.row0(tile), &full[s],
             TILE_BYTES);
  };
  if (t == 0)
    for (std::size_t j = 0; j < my_tiles && j < STAGES; ++j) produce(j);
  for (std::size_t j = 0; j < my_tiles; ++j) {
    const int s = static_cast<int>(j % STAGES);
    const bool landed = wait_parity_bounded(&full[s], ring_parity<STAGES>(j));
    if (t == 0) ptx::cp_async_bulk_wait_group_read(ptx::n32_t<1>{});  // staging j&1 free
    if (__syncthreads_or(!landed)) {
      if (t == 0) {
        atomicOr(d_error, kErrTimeout);
        ptx::cp_async_bulk_wait_group(ptx::n32_t<0>{});
      }
      return;
    }
    const float* box = s_ring + s * TILE * TILE;
    float* stage = s_out + (j & 1) * TILE * TILE;  // [32 out rows = c][32 out cols = r]
#pragma unroll
    for (int k = 0; k < TILE / WARPS; ++k) {
      const int c = warp + k * WARPS;
      stage[c * TILE + lane] = box[swizzled_128b(lane, c)];
    }
    ptx::fence_proxy_async(ptx::space_shared);  // my STS -> visible to the TMA store
    __syncthreads();                            // staging box complete; slot s consumed
    if (t == 0) {
      const std::size_t tile = block_tile(j);
      const std::int32_t out_coords[2] = {g.row0(tile), g.col0(tile)};  // transposed tile
      ptx::cp_async_bulk_tensor(ptx::space_global, ptx::space_shared, &map_out, out_coords,
                                stage);
      ptx::cp_async_bulk_commit_group();
      if (j + STAGES < my_tiles) produce(j + STAGES);
    }
  }
  if (t == 0) ptx::cp_async_bulk_wait_group(ptx::n32_t<0>{});  // epilogue: stores complete
}

// ---------------------------------------------------------------------------------------------
// probe: one box, copied raw to global (tests use it to see the out-of-bounds fill)
// ---------------------------------------------------------------------------------------------
__global__ void probe_v5_box_kernel(const __grid_constant__ CUtensorMap map, int x, int y,
                                    float* __restrict__ d_box, unsigned* d_error) {
  float* box = reinterpret_cast<float*>(aligned_dynamic_smem());
  __shared__ __align__(8) std::uint64_t bar;
  init_full_barriers<1>(&bar);
  if (threadIdx.x == 0) {
    (void)cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cta,
                                               cuda::ptx::space_shared, &bar, TILE_BYTES);
    ptx_tensor_load_2d(box, &map, x, y, &bar);
  }
  if (!wait_parity_bounded(&bar, 0)) {
    atomicOr(d_error, kErrTimeout);
    return;
  }
  for (int i = threadIdx.x; i < TILE * TILE; i += blockDim.x) d_box[i] = box[i];
}

// ---------------------------------------------------------------------------------------------
// Launchers
// ---------------------------------------------------------------------------------------------
constexpr std::size_t RING_SMEM = std::size_t{STAGES} * TILE_BYTES + SMEM_ALIGN;       // 33 KiB
constexpr std::size_t STORE_SMEM = RING_SMEM + 2 * std::size_t{TILE_BYTES};             // 41 KiB

inline void launch_transpose_v0(const float* d_in, float* d_out, int n, int sms, int per_sm,
                                cudaStream_t s) {
  const unsigned grid = tut::persistent_grid(transpose_v0_cpasync_kernel, THREADS, sms, per_sm);
  transpose_v0_cpasync_kernel<<<grid, THREADS, 0, s>>>(d_in, d_out, n);
}

inline void launch_transpose_v1(const CUtensorMap& map_in, float* d_out, int n,
                                unsigned* d_error, int sms, int per_sm, cudaStream_t s) {
  const unsigned grid =
      tut::persistent_grid(transpose_v1_tma_ptx_kernel, THREADS, sms, per_sm, RING_SMEM);
  transpose_v1_tma_ptx_kernel<<<grid, THREADS, RING_SMEM, s>>>(map_in, d_out, n, d_error);
}

template <bool SWAP_COORDS = false>
void launch_transpose_v2(const CUtensorMap& map_in_sw128, float* d_out, int n, unsigned* d_error,
                         int sms, int per_sm, cudaStream_t s) {
  auto kernel = transpose_v2_tma_swizzle_kernel<SWAP_COORDS>;
  const unsigned grid = tut::persistent_grid(kernel, THREADS, sms, per_sm, RING_SMEM);
  kernel<<<grid, THREADS, RING_SMEM, s>>>(map_in_sw128, d_out, n, d_error);
}

inline void launch_transpose_v3(const CUtensorMap& map_in_sw128, const CUtensorMap& map_out,
                                int n, unsigned* d_error, int sms, int per_sm, cudaStream_t s) {
  const unsigned grid =
      tut::persistent_grid(transpose_v3_tma_store_kernel, THREADS, sms, per_sm, STORE_SMEM);
  transpose_v3_tma_store_kernel<<<grid, THREADS, STORE_SMEM, s>>>(map_in_sw128, map_out, n,
                                                                  d_error);
}

// v4-v6: BOX_ROWS x 32 boxes in a ring of RING slots.
template <int BOX_ROWS, int RING>
void launch_transpose_v4(const CUtensorMap& map, float* d_out, int n, unsigned* d_error, int sms,
                         int per_sm, cudaStream_t s) {
  constexpr std::size_t smem = std::size_t{RING} * BOX_ROWS * TILE * 4 + SMEM_ALIGN;
  auto kernel = transpose_v4_tma_rowread_kernel<BOX_ROWS, RING>;
  const unsigned grid = tut::persistent_grid(kernel, THREADS, sms, per_sm, smem);
  kernel<<<grid, THREADS, smem, s>>>(map, d_out, n, d_error);
}

inline void launch_probe_v5(const CUtensorMap& map, int x, int y, float* d_box, unsigned* d_error,
                            cudaStream_t s) {
  constexpr std::size_t smem = TILE_BYTES + SMEM_ALIGN;
  probe_v5_box_kernel<<<1, THREADS, smem, s>>>(map, x, y, d_box, d_error);
}

// ---------------------------------------------------------------------------------------------
// CPU reference and the problem
// ---------------------------------------------------------------------------------------------
inline std::vector<std::uint32_t> reference_transpose(const std::vector<std::uint32_t>& in,
                                                      std::size_t n) {
  std::vector<std::uint32_t> out(n * n);
  for (std::size_t r = 0; r < n; ++r)
    for (std::size_t c = 0; c < n; ++c) out[c * n + r] = in[r * n + c];
  return out;
}

// --size is the side N of the square matrix; each matrix is N*N*4 bytes.
struct Problem {
  explicit Problem(const tut::RunConfig& cfg)
      : cfg(cfg),
        n(static_cast<int>(cfg.size)),
        elems(cfg.size * cfg.size),
        d_in(elems),
        d_out(elems) {
    h_in.resize(elems);
    tut::fill_unique_words(h_in.data(), elems, cfg.seed);
    d_in.upload(h_in);
    const auto* in = reinterpret_cast<const float*>(d_in.data());
    auto* out = reinterpret_cast<float*>(d_out.data());
    map_in = make_tile_map(in, n, n, CU_TENSOR_MAP_SWIZZLE_NONE);
    map_in_sw128 = make_tile_map(in, n, n, CU_TENSOR_MAP_SWIZZLE_128B);
    map_out = make_tile_map(out, n, n, CU_TENSOR_MAP_SWIZZLE_NONE);
    map_in_sw128_r128 = make_tile_map(in, n, n, CU_TENSOR_MAP_SWIZZLE_128B, 128);  // v5
    map_in_sw128_r256 = make_tile_map(in, n, n, CU_TENSOR_MAP_SWIZZLE_128B, 256);  // v6
  }
  void poison(cudaStream_t s) {
    d_out.poison(s);
    d_error.clear(s);
  }
  tut::VerifyResult verify(cudaStream_t s, int /*reference*/) {
    if (want.empty()) want = reference_transpose(h_in, n);
    return compare_words_and_error(s, d_out, want, d_error, describe_timeout);
  }
  double work() const { return 2.0 * 4.0 * static_cast<double>(elems); }
  std::string describe() const {
    return std::to_string(n) + " x " + std::to_string(n) + " floats (" +
           tut::format_bytes(4.0 * double(elems)) + " per matrix)";
  }
  const float* in() const { return reinterpret_cast<const float*>(d_in.data()); }
  float* out() { return reinterpret_cast<float*>(d_out.data()); }
  int sms() const { return cfg.device.sm_count; }
  int low() const { return static_cast<int>(cfg.extra("blocks-per-sm")); }

  tut::RunConfig cfg;
  int n;
  std::size_t elems;
  tut::DeviceBuffer<std::uint32_t> d_in, d_out;
  ErrorWord d_error;
  std::vector<std::uint32_t> h_in, want;
  CUtensorMap map_in{}, map_in_sw128{}, map_out{}, map_in_sw128_r128{}, map_in_sw128_r256{};
};

inline std::vector<tut::Variant<Problem>> variants() {
  VariantList<Problem> add;
  add("v0_cpasync_full", "v0 cp.async-fed, full occ",
      "32x32 tiles by 16 B cp.async per thread, padded rows, 8-stage ring; full occupancy",
      [](Problem& p, cudaStream_t s) { launch_transpose_v0(p.in(), p.out(), p.n, p.sms(), 0, s); });
  add("v0_cpasync_low", "v0 cp.async-fed, low occ", "the same at --blocks-per-sm blocks per SM",
      [](Problem& p, cudaStream_t s) {
        launch_transpose_v0(p.in(), p.out(), p.n, p.sms(), p.low(), s);
      });
  add("v1_tma_ptx_full", "v1 TMA 2D PTX, no swizzle",
      "raw PTX cp.async.bulk.tensor.2d, dense box: 32-way conflicts on column reads",
      [](Problem& p, cudaStream_t s) {
        launch_transpose_v1(p.map_in, p.out(), p.n, p.d_error.data(), p.sms(), 0, s);
      });
  add("v2_tma_sw128_full", "v2 TMA 2D swizzle128, full",
      "cuda::ptx tensor load, SWIZZLE_128B box: 4-way conflicts; full occupancy",
      [](Problem& p, cudaStream_t s) {
        launch_transpose_v2(p.map_in_sw128, p.out(), p.n, p.d_error.data(), p.sms(), 0, s);
      });
  add("v2_tma_sw128_low", "v2 TMA 2D swizzle128, low",
      "the same at --blocks-per-sm blocks per SM",
      [](Problem& p, cudaStream_t s) {
        launch_transpose_v2(p.map_in_sw128, p.out(), p.n, p.d_error.data(), p.sms(), p.low(), s);
      });
  add("v3_tma_store_full", "v3 TMA load + TMA store",
      "swizzled load, transpose into a staging box, fence.proxy.async, UTMASTG; full occ",
      [](Problem& p, cudaStream_t s) {
        launch_transpose_v3(p.map_in_sw128, p.map_out, p.n, p.d_error.data(), p.sms(), 0, s);
      });
  add("v4_tma_rowread_full", "v4 TMA sw128, LDS.128 reads",
      "v2 with conflict-free LDS.128 row reads of the swizzled box; 32x32 tiles, full occ",
      [](Problem& p, cudaStream_t s) {
        launch_transpose_v4<32, 8>(p.map_in_sw128, p.out(), p.n, p.d_error.data(), p.sms(), 0, s);
      });
  add("v5_tma_tall128_full", "v5 TMA 128x32 boxes, LDS.128",
      "v4 with 128-row x 32-col boxes (16 KiB, 4-slot ring): 512 B written per output row",
      [](Problem& p, cudaStream_t s) {
        launch_transpose_v4<128, 4>(p.map_in_sw128_r128, p.out(), p.n, p.d_error.data(), p.sms(),
                                    0, s);
      });
  add("v6_tma_tall256_full", "v6 TMA 256x32 boxes, LDS.128",
      "v4 with 256-row x 32-col boxes (32 KiB, 3-slot ring): 1 KiB written per output row",
      [](Problem& p, cudaStream_t s) {
        launch_transpose_v4<256, 3>(p.map_in_sw128_r256, p.out(), p.n, p.d_error.data(), p.sms(),
                                    0, s);
      });
  add("v9_swapped_coords", "v9 BROKEN: coords {y, x}",
      "negative: tensor coordinates given row first; TMA wants innermost (column) first",
      [](Problem& p, cudaStream_t s) {
        launch_transpose_v2<true>(p.map_in_sw128, p.out(), p.n, p.d_error.data(), p.sms(), 0, s);
      },
      true);
  return std::move(add.list);
}

}  // namespace ch12
