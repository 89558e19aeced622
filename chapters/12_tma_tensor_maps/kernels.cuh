/// @file kernels.cuh
/// @brief Chapter 12's lesson kernels in variant order: v0 (cp.async baseline), v1 (TMA tensor
///        loads in raw PTX), v2 (cuda::ptx, 128-byte swizzle), v3 (TMA load + TMA store),
///        v4-v7 (conflict-free row reads, tile shapes, the control), v8 (a pipeline per warp:
///        a deep ring of loads, TMA stores from staging tiles), v10 (v8 with tiles of several
///        side-by-side boxes), v11 (v10 with other tile orders, L2 hints, one staging tile),
///        the probe the tests use, and the launchers.
//
// Chapter 12: TMA tensor maps (2D) - the copy engine understands rows, strides and edges
//
// A 2D tile of a matrix is 32 separate runs of bytes, one per row. A *tensor map* (CUtensorMap,
// built on the host with cuTensorMapEncodeTiled: main.cu) describes the whole matrix: base,
// sizes, row pitch, box shape, shared-memory swizzle, out-of-bounds fill. One thread asks for
// "the box at (x, y)" (cp.async.bulk.tensor.2d, SASS UTMALDG.2D); the TMA unit walks the rows,
// clips at the edges (filling zeros) and writes the box into shared memory, swizzled if asked.
//
// Workload: out = transpose(in), N x N floats (N % 4 == 0: the 16-byte row-pitch rule), in
// 32 x 32 tiles; the threads read each tile by COLUMN, where bank conflicts and swizzling
// matter. The ring is chapter 11's with slots released by __syncthreads. Every bounded wait
// names itself when it gives up (tut::wait_or_report: who waited on which barrier, slot, parity
// and tile). Needs compute capability 9.0 and CUDA 12.8 or newer (PTX ISA 8.6).
// Run: build/bin/ch12_tma_tensor_maps [--size=N] [--list]; --size is the matrix side N.
#pragma once

#include <cuda.h>  // CUtensorMap (the type only: nothing here links libcuda)
#include <cuda/ptx>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "common/bounded_wait.cuh"
#include "common/cp_async.cuh"
#include "common/launch.cuh"
#include "common/perturb.cuh"
#include "common/ring.cuh"

namespace ch12 {

constexpr int THREADS = 256;
constexpr int WARPS = THREADS / 32;
constexpr int TILE = 32;                // 32 x 32 floats = 4 KiB per tile (the box)
constexpr int TILE_BYTES = TILE * TILE * 4;
constexpr int STAGES = 8;               // ring of 8 boxes = 32 KiB in flight per block
constexpr int CPA_PITCH = TILE + 4;     // v0: padded row, 144 B (16 B aligned for cp.async)
constexpr int SMEM_ALIGN = 1024;        // the 128-byte swizzle repeats every 1024 bytes

// Dynamic shared memory rounded up to SMEM_ALIGN (the launch asks for SMEM_ALIGN extra bytes).
// The 128-byte swizzle XORs address bits [4:6] with bits [7:9]; the index math assumes a box
// starts on a 1024-byte boundary, so that bits [7:9] are the row number mod 8.
__device__ inline unsigned char* aligned_dynamic_smem() {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const std::uint32_t a = tut::smem_addr(smem_raw);
  return smem_raw + ((SMEM_ALIGN - a % SMEM_ALIGN) % SMEM_ALIGN);
}

// Element (r, c) of a 32 x 32 float box as the TMA unit lays it out with SWIZZLE_128B: row r
// occupies bytes [128 r, 128 r + 128); inside it the 16-byte chunk c / 4 is moved to chunk
// (c / 4) ^ (r % 8). A column read (fixed c, r = lane) then touches 8 different 16-byte chunks:
// 4-way bank conflicts instead of 32-way.
__device__ inline int swizzled_128b(int r, int c) {
  // EXERCISE-BEGIN: the float index of element (r, c) in a SWIZZLE_128B box (the comment above says how the chunks move)
  return r * TILE + ((((c >> 2) ^ (r & 7)) << 2) | (c & 3));
  // EXERCISE-STUB: return r * TILE + c;  // the dense (unswizzled) layout: wrong for SWIZZLE_128B
  // EXERCISE-END
}

// The N x N matrix cut into tiles of ROWS x COLS floats, numbered row-major: consecutive tiles
// are neighbours along a tile row.
template <int ROWS = TILE, int COLS = TILE>
struct TileGrid {
  int n, tiles_x;
  std::size_t num_tiles;
  __host__ __device__ explicit TileGrid(int n_) : n(n_), tiles_x((n_ + COLS - 1) / COLS) {
    num_tiles = static_cast<std::size_t>(tiles_x) * ((n_ + ROWS - 1) / ROWS);
  }
  __device__ int row0(std::size_t tile) const { return static_cast<int>(tile / tiles_x) * ROWS; }
  __device__ int col0(std::size_t tile) const { return static_cast<int>(tile % tiles_x) * COLS; }
};

// v11: the same tiles, another order. The grid's blocks take consecutive tile numbers t at the
// same moment, so the order decides which matrix rows the whole GPU reads and writes together.
// Row-major (TileGrid) puts the blocks side by side along one tile row: together they read
// long input rows, but each output row gets only ROWS * 4 bytes from one tile, and its next
// piece comes a tile row later. GroupedTileGrid walks bands of GROUP tile rows column by
// column: t = 0 .. GROUP - 1 go DOWN one tile column of the band, the next GROUP the next
// column, ..., then the next band. At any moment the blocks work in a patch about GROUP tiles
// high and blocks / GROUP tiles wide, so they read input rows in runs of about
// (blocks / GROUP) * COLS * 4 bytes and write output rows in runs of GROUP * ROWS * 4 bytes.
// GROUP >= the tile rows (kWholeColumns) is the column-major order: the blocks write whole
// output rows together. The last band may be shorter; every t still maps to one tile.
constexpr int kWholeColumns = 1 << 20;
template <int ROWS, int COLS, int GROUP>
struct GroupedTileGrid {
  static_assert(GROUP >= 1, "GROUP tile rows per band");
  int n, tiles_x, tiles_y;
  std::size_t num_tiles;
  __host__ __device__ explicit GroupedTileGrid(int n_)
      : n(n_), tiles_x((n_ + COLS - 1) / COLS), tiles_y((n_ + ROWS - 1) / ROWS) {
    num_tiles = static_cast<std::size_t>(tiles_x) * tiles_y;
  }
  // Tile t lies in band t / (GROUP * tiles_x); inside it, tiles go down a column of the band's
  // rows_here tile rows before the next column. Below 2^32 tiles (N <= 32768: 2^20 of 32 x 32),
  // so 32-bit division is exact.
  __host__ __device__ void place(std::size_t t, int& tile_row, int& tile_col) const {
    const unsigned rows_per_band = GROUP < tiles_y ? GROUP : tiles_y;
    const unsigned band = static_cast<unsigned>(t) / (rows_per_band * tiles_x);
    const unsigned in_band = static_cast<unsigned>(t) - band * rows_per_band * tiles_x;
    const unsigned first_row = band * rows_per_band;
    const unsigned left = tiles_y - first_row;  // tile rows from this band's first on
    const unsigned rows_here = rows_per_band < left ? rows_per_band : left;
    tile_row = static_cast<int>(first_row + in_band % rows_here);
    tile_col = static_cast<int>(in_band / rows_here);
  }
  __host__ __device__ int row0(std::size_t t) const {
    int r, c;
    place(t, r, c);
    return r * ROWS;
  }
  __host__ __device__ int col0(std::size_t t) const {
    int r, c;
    place(t, r, c);
    return c * COLS;
  }
};

// The consumer step of v0-v2: write the transposed tile to global memory. Warp w owns output
// rows c = w, w+8, w+16, w+24 of the out tile; lane = output column r: each warp store is 32
// consecutive floats (one 128-byte line). `at(r, c)` says where input element (r, c) sits.
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
// v0: the cp.async baseline - 256 threads copy 16 B each per tile, with their own bounds checks
// ---------------------------------------------------------------------------------------------
// Rows are padded to 36 floats so the column reads conflict 4-way only. n % 4 == 0 keeps a
// 16-byte chunk all inside or all outside the matrix. `tile` counts this block's tiles (0, 1,
// ...); tut::block_tile(tile) is that tile's number in the matrix (ring.cuh).
__global__ void __launch_bounds__(THREADS)
    transpose_v0_cpasync_kernel(const float* __restrict__ d_in, float* __restrict__ d_out, int n) {
  __shared__ alignas(16) float s_ring[STAGES][TILE][CPA_PITCH];  // 8 x [32][36] floats
  const TileGrid<> g(n);
  const std::size_t my_tiles = tut::tiles_of_this_block(g.num_tiles);
  const int tid = threadIdx.x, row = tid / 8, chunk = tid % 8;  // [32 rows x 8 chunks of 16 B]
  auto issue = [&](std::size_t tile) {
    if (tile < my_tiles) {
      const std::size_t matrix_tile = tut::block_tile(tile);
      const int r = g.row0(matrix_tile) + row, c = g.col0(matrix_tile) + chunk * 4;
      if (r < n && c < n)
        tut::cp_async_cg16(&s_ring[tile % STAGES][row][chunk * 4],
                           d_in + static_cast<std::size_t>(r) * n + c);
    }
    tut::cp_async_commit_group();
  };
  for (int tile = 0; tile < STAGES - 1; ++tile) issue(tile);  // prologue
  for (std::size_t tile = 0; tile < my_tiles; ++tile) {
    issue(tile + STAGES - 1);
    tut::cp_async_wait_group<STAGES - 1>();  // my part of this tile
    __syncthreads();                         // everyone's
    const std::size_t matrix_tile = tut::block_tile(tile);
    float(*s)[CPA_PITCH] = s_ring[tile % STAGES];
    store_transposed(d_out, n, g.row0(matrix_tile), g.col0(matrix_tile),
                     [&](int r, int c) { return s[r][c]; });
    __syncthreads();  // slot consumed before it is refilled
  }
  tut::cp_async_wait_all();
}

// ---------------------------------------------------------------------------------------------
// v1: TMA tensor loads in raw PTX, no swizzle
// ---------------------------------------------------------------------------------------------
// Thread 0 issues `cp.async.bulk.tensor.2d` for a whole 32 x 32 box. The TMA unit clips the box
// against the matrix and fills the outside with zeros; it still delivers (and counts on the
// mbarrier) the FULL box, 4096 bytes, so expect_tx is constant. Without swizzle the box is
// dense, 128 bytes per row: a column read hits one bank 32 times, and TMA has no padding knob.
// Ring: full[s] (count 1 + tx bytes) says "slot s holds this tile"; a __syncthreads releases the
// slot, after which thread 0 refills it: an async-proxy write into a slot the threads just read
// with ordinary loads. __syncthreads orders those reads for the generic proxy only, so every
// thread runs fence.proxy.async before it (chapter 11's rule); asm_expect.txt asserts the order.
// The full barriers are used inside this block only: the init fence is fence.proxy.async
// (chapter 11, "The init fence").
__global__ void __launch_bounds__(THREADS)
    transpose_v1_tma_ptx_kernel(const __grid_constant__ CUtensorMap map_in,
                                float* __restrict__ d_out, int n, unsigned* d_error) {
  float* s_ring = reinterpret_cast<float*>(aligned_dynamic_smem());  // [STAGES][32][32]
  __shared__ __align__(8) std::uint64_t full[STAGES];
  const TileGrid<> g(n);
  const std::size_t my_tiles = tut::tiles_of_this_block(g.num_tiles);
  const int tid = threadIdx.x, warp = tid / 32;
  if (tid == 0) {
    for (int s = 0; s < STAGES; ++s)
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(tut::smem_addr(&full[s]))
                   : "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // init -> async proxy
  }
  __syncthreads();
  auto produce = [&](std::size_t tile) {  // thread 0: expect the whole box, then load it
    const int s = static_cast<int>(tile % STAGES);
    const std::size_t matrix_tile = tut::block_tile(tile);
    asm volatile("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [%0], %1;"
                 ::"r"(tut::smem_addr(&full[s])), "r"(TILE_BYTES) : "memory");
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%2, %3}], [%4];"
        ::"r"(tut::smem_addr(s_ring + s * TILE * TILE)),
          "l"(reinterpret_cast<std::uint64_t>(&map_in)), "r"(g.col0(matrix_tile)),
          "r"(g.row0(matrix_tile)), "r"(tut::smem_addr(&full[s]))
        : "memory");
  };
  if (tid == 0)
    for (std::size_t tile = 0; tile < my_tiles && tile < STAGES; ++tile) produce(tile);  // prologue
  tut::RingPosition<STAGES> ring;
  for (std::size_t tile = 0; tile < my_tiles; ++tile, ring.advance()) {
    // Every thread waits for its slot's phase; going on is decided block-wide, so after a
    // timeout the whole block returns together (each warp that gave up has recorded its wait).
    const bool landed = tut::wait_or_report(  // v1: has this tile landed in its slot?
        &full[ring.slot], ring.phase, d_error,
        tut::WaitSite::consumer_warp(warp).on(tut::Barrier::kFull, ring.slot).at_tile(tile)
            .expecting(TILE_BYTES));
    if (__syncthreads_or(!landed)) return;
    const std::size_t matrix_tile = tut::block_tile(tile);
    const float* box = s_ring + ring.slot * TILE * TILE;  // slot holds this tile, dense [32][32]
    store_transposed(d_out, n, g.row0(matrix_tile), g.col0(matrix_tile),
                     [&](int r, int c) { return box[r * TILE + c]; });
    tut::perturb(tut::Perturb::kBeforeRelease, tile);
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // my reads -> before the refill
    __syncthreads();  // slot consumed by everyone
    if (tid == 0 && tile + STAGES < my_tiles) produce(tile + STAGES);
  }
}

// ---------------------------------------------------------------------------------------------
// v2: the same with cuda::ptx and a 128-byte swizzle (conflicts 32-way -> 4-way)
// ---------------------------------------------------------------------------------------------
// The swizzle is a property of the tensor map (CU_TENSOR_MAP_SWIZZLE_128B), not of the
// instruction; the kernel only has to read through swizzled_128b().
// The TMA issue (thread 0): one arrival on `bar` expecting the WHOLE box's bytes (the TMA unit
// zero-fills what lies outside the matrix), then the load of the box at column x, row y into `dst`.
__device__ inline void load_box(float* dst, const CUtensorMap* map, std::int32_t x, std::int32_t y,
                                std::uint64_t* bar, std::uint32_t box_bytes) {
  namespace ptx = cuda::ptx;
  const std::int32_t coords[2] = {x, y};
  (void)ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, bar,
                                       box_bytes);
  ptx::cp_async_bulk_tensor(ptx::space_shared, ptx::space_global, dst, map, coords, bar);
}

// v1's set-up in cuda::ptx (v2-v7): each full barrier counts one arrival (the expect_tx); the
// init fence (fence.proxy.async.shared::cta: the barriers stay inside this block) orders the
// init before the TMA's complete_tx (async proxy); then the block meets.
template <int N>
__device__ inline void init_full_barriers(std::uint64_t (&full)[N]) {
  if (threadIdx.x == 0) {
    for (int s = 0; s < N; ++s) cuda::ptx::mbarrier_init(&full[s], 1);
    cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
  }
  __syncthreads();
}

// The producer step of v2 and v3 (thread 0): this block's tile `tile`, a 32 x 32 box of `map`
// at {column, row} (innermost first), into slot tile % STAGES, completing on its full barrier.
__device__ inline void load_tile(float* s_ring, const CUtensorMap* map, const TileGrid<>& g,
                                 std::uint64_t* full, std::size_t tile) {
  const std::size_t matrix_tile = tut::block_tile(tile);
  const int s = static_cast<int>(tile % STAGES);
  load_box(s_ring + s * TILE * TILE, map, g.col0(matrix_tile), g.row0(matrix_tile), &full[s],
           TILE_BYTES);
}

// The prologue of v2 and v3 (thread 0): the block's first STAGES tiles, or all if it has fewer.
__device__ inline void fill_ring(float* s_ring, const CUtensorMap* map, const TileGrid<>& g,
                                 std::uint64_t* full, std::size_t my_tiles) {
  for (std::size_t tile = 0; tile < my_tiles && tile < STAGES; ++tile)
    load_tile(s_ring, map, g, full, tile);
}

__global__ void __launch_bounds__(THREADS)
    transpose_v2_tma_swizzle_kernel(const __grid_constant__ CUtensorMap map_in_sw128,
                                    float* __restrict__ d_out, int n, unsigned* d_error) {
  float* s_ring = reinterpret_cast<float*>(aligned_dynamic_smem());  // [STAGES][32][32] swizzled
  __shared__ __align__(8) std::uint64_t full[STAGES];
  const TileGrid<> g(n);
  const std::size_t my_tiles = tut::tiles_of_this_block(g.num_tiles);
  const int tid = threadIdx.x, warp = tid / 32;
  init_full_barriers(full);
  if (tid == 0) fill_ring(s_ring, &map_in_sw128, g, full, my_tiles);
  tut::RingPosition<STAGES> ring;
  for (std::size_t tile = 0; tile < my_tiles; ++tile, ring.advance()) {
    const bool landed = tut::wait_or_report(  // v2: has the swizzled box landed?
        &full[ring.slot], ring.phase, d_error,
        tut::WaitSite::consumer_warp(warp).on(tut::Barrier::kFull, ring.slot).at_tile(tile)
            .expecting(TILE_BYTES));
    if (__syncthreads_or(!landed)) return;  // a timeout anywhere: the whole block stops
    const std::size_t matrix_tile = tut::block_tile(tile);
    const float* box = s_ring + ring.slot * TILE * TILE;  // slot holds this tile, swizzled
    store_transposed(d_out, n, g.row0(matrix_tile), g.col0(matrix_tile),
                     [&](int r, int c) { return box[swizzled_128b(r, c)]; });
    tut::perturb(tut::Perturb::kBeforeRelease, tile);
    cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);  // my reads -> before the TMA refill
    __syncthreads();
    if (tid == 0 && tile + STAGES < my_tiles)
      load_tile(s_ring, &map_in_sw128, g, full, tile + STAGES);
  }
}

// ---------------------------------------------------------------------------------------------
// v3: TMA load (swizzled) + transpose in shared memory + TMA store
// ---------------------------------------------------------------------------------------------
// Threads write the transposed tile into a dense [32][32] staging box (lane = column: no
// conflicts), fence.proxy.async (generic writes -> the async proxy that the TMA store reads
// through; the same fence orders this thread's reads of slot s before the refill), barrier,
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
  const std::size_t my_tiles = tut::tiles_of_this_block(g.num_tiles);
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  init_full_barriers(full);
  if (tid == 0) fill_ring(s_ring, &map_in_sw128, g, full, my_tiles);
  tut::RingPosition<STAGES> ring;
  for (std::size_t tile = 0; tile < my_tiles; ++tile, ring.advance()) {
    const bool landed = tut::wait_or_report(  // v3: has the box to transpose landed?
        &full[ring.slot], ring.phase, d_error,
        tut::WaitSite::consumer_warp(warp).on(tut::Barrier::kFull, ring.slot).at_tile(tile)
            .expecting(TILE_BYTES));
    if (tid == 0) ptx::cp_async_bulk_wait_group_read(ptx::n32_t<1>{});  // staging tile&1 free
    if (__syncthreads_or(!landed)) {  // a timeout anywhere: drain my stores, stop together
      if (tid == 0) ptx::cp_async_bulk_wait_group(ptx::n32_t<0>{});
      return;
    }
    const float* box = s_ring + ring.slot * TILE * TILE;
    float* stage = s_out + (tile & 1) * TILE * TILE;  // [32 out rows = c][32 out cols = r]
#pragma unroll
    for (int k = 0; k < TILE / WARPS; ++k) {
      const int c = warp + k * WARPS;
      stage[c * TILE + lane] = box[swizzled_128b(lane, c)];
    }
    tut::perturb(tut::Perturb::kBeforeRelease, tile);
    ptx::fence_proxy_async(ptx::space_shared);  // my STS -> visible to the TMA store
    __syncthreads();                            // staging box complete; slot consumed
    if (tid == 0) {
      const std::size_t matrix_tile = tut::block_tile(tile);
      const std::int32_t out_coords[2] = {g.row0(matrix_tile), g.col0(matrix_tile)};  // transposed
      ptx::cp_async_bulk_tensor(ptx::space_global, ptx::space_shared, &map_out, out_coords,
                                stage);
      ptx::cp_async_bulk_commit_group();
      if (tile + STAGES < my_tiles) load_tile(s_ring, &map_in_sw128, g, full, tile + STAGES);
    }
  }
  if (tid == 0) ptx::cp_async_bulk_wait_group(ptx::n32_t<0>{});  // epilogue: stores complete
}

// ---------------------------------------------------------------------------------------------
// v4-v7: the swizzled box read WITHOUT conflicts (LDS.128 along a row); tile shapes
// ---------------------------------------------------------------------------------------------
// Reads: lane l takes 16-byte chunk k of box row r = 32 g + l with one LDS.128. With
// SWIZZLE_128B that chunk sits at k ^ (r % 8); the 8 lanes of a quarter-warp hit 8 different
// chunks = all 32 banks: conflict-free. The lane's floats in[r][4k..4k+3] are out[4k+i][r], so
// the warp writes 4 output rows of 32 consecutive floats (coalesced 128-byte stores).
// A slot holds BOXES_X boxes of BOX_ROWS x 32 side by side, all loaded on one full[s] phase.
// Each output row receives BOX_ROWS * 4 contiguous bytes per box:
//   v4  32 x 32,   1 box,  ring 8: 128 B per output row, a refill and a sync per 4 KiB
//   v5  128 x 32,  1 box,  ring 4: 512 B per output row, a refill and a sync per 16 KiB
//   v6  256 x 32,  1 box,  ring 3: 1 KiB per output row, a refill and a sync per 32 KiB
//   v7  32 x 128,  4 boxes, ring 4: v5's slot size, ring depth and cadence with v4's 128 B
//       per output row: the control that tells the write pattern from the cadence.
template <int BOX_ROWS, int BOXES_X, int RING_STAGES>
__global__ void __launch_bounds__(THREADS)
    transpose_v4_tma_rowread_kernel(const __grid_constant__ CUtensorMap map_in_sw128,
                                    float* __restrict__ d_out, int n, unsigned* d_error) {
  static_assert(BOX_ROWS % 32 == 0 && BOX_ROWS <= 256, "whole 32-row groups, TMA box <= 256");
  constexpr int BOX_FLOATS = BOX_ROWS * TILE;
  constexpr std::uint32_t BOX_BYTES = BOX_FLOATS * 4;    // a multiple of 1024: boxes stay aligned
  constexpr int UNITS = BOX_ROWS / 32 * (TILE / 4);      // (32-row group, chunk) pairs per box
  float* s_ring = reinterpret_cast<float*>(aligned_dynamic_smem());  // [RING_STAGES][BOXES_X][box]
  __shared__ __align__(8) std::uint64_t full[RING_STAGES];
  const TileGrid<BOX_ROWS, TILE * BOXES_X> g(n);
  const std::size_t my_tiles = tut::tiles_of_this_block(g.num_tiles);
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  init_full_barriers(full);
  auto boxes_in = [&](int c0) { return min(BOXES_X, (n - c0 + TILE - 1) / TILE); };  // inside
  auto produce = [&](std::size_t tile) {  // one arrival expecting every box's bytes, then the loads
    const int s = static_cast<int>(tile % RING_STAGES);
    const std::size_t matrix_tile = tut::block_tile(tile);
    const int c0 = g.col0(matrix_tile), nb = boxes_in(c0);
    (void)cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cta,
                                               cuda::ptx::space_shared, &full[s], nb * BOX_BYTES);
    for (int b = 0; b < nb; ++b) {
      const std::int32_t coords[2] = {c0 + b * TILE, g.row0(matrix_tile)};
      cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_shared, cuda::ptx::space_global,
                                      s_ring + (s * BOXES_X + b) * BOX_FLOATS, &map_in_sw128,
                                      coords, &full[s]);
    }
  };
  if (tid == 0)
    for (std::size_t tile = 0; tile < my_tiles && tile < RING_STAGES; ++tile) produce(tile);
  tut::RingPosition<RING_STAGES> ring;
  for (std::size_t tile = 0; tile < my_tiles; ++tile, ring.advance()) {
    const std::size_t matrix_tile = tut::block_tile(tile);
    const int r0 = g.row0(matrix_tile), c0 = g.col0(matrix_tile), nb = boxes_in(c0);
    const bool landed = tut::wait_or_report(  // v4-v7: has every box of the slot landed?
        &full[ring.slot], ring.phase, d_error,
        tut::WaitSite::consumer_warp(warp).on(tut::Barrier::kFull, ring.slot).at_tile(tile)
            .expecting(nb * BOX_BYTES));
    if (__syncthreads_or(!landed)) return;  // a timeout anywhere: the whole block stops
    for (int b = 0; b < nb; ++b) {
      const float* box = s_ring + (ring.slot * BOXES_X + b) * BOX_FLOATS;  // 128B-swizzled rows
      const int cb = c0 + b * TILE;                                        // the box's column 0
#pragma unroll
      for (int u = warp; u < UNITS; u += WARPS) {
        const int r = (u / (TILE / 4)) * 32 + lane, k = u % (TILE / 4);
        // EXERCISE-BEGIN: chunk k of box row r in ONE 16-byte load from its swizzled place; its 4 floats to output rows cb+4k..cb+4k+3, column r0+r, inside the matrix only
        const float4 v = *reinterpret_cast<const float4*>(box + r * TILE + ((k ^ (r & 7)) << 2));
        if (r0 + r < n && cb + 4 * k < n) {  // n % 4 == 0: the 4 output rows are all in or out
          float* o = d_out + static_cast<std::size_t>(cb + 4 * k) * n + r0 + r;
          o[0] = v.x;  // out[cb+4k+0][r0+r]: lanes r = 0..31 write 128 contiguous bytes
          o[static_cast<std::size_t>(n)] = v.y;
          o[2 * static_cast<std::size_t>(n)] = v.z;
          o[3 * static_cast<std::size_t>(n)] = v.w;
        }
        // EXERCISE-STUB: (void)box, (void)r, (void)k, (void)cb, (void)r0;  // delete once used
        // EXERCISE-END
      }
    }
    tut::perturb(tut::Perturb::kBeforeRelease, tile);
    cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);  // my reads -> before the refill
    __syncthreads();  // slot consumed
    if (tid == 0 && tile + RING_STAGES < my_tiles) produce(tile + RING_STAGES);
  }
}

// ---------------------------------------------------------------------------------------------
// v8: one pipeline per warp - a private ring of loads, TMA stores from private staging tiles
// ---------------------------------------------------------------------------------------------
// v2-v7 share one ring per block and release its slots with __syncthreads: thread 0 cannot
// refill a slot before the slowest warp is done with it, and at one block per SM the ring is
// all that is in flight. v8 gives every warp its own pipeline and no block barrier at all after
// the set-up:
//   - a ring of SLOTS_PER_WARP slots, each one BOX_ROWS x 32 box (SWIZZLE_128B: 128 B rows),
//     filled by the warp's lane 0 on the slot's full barrier; the warp takes the block's tiles
//     warp, warp + CONSUMER_WARPS, ..., so a block keeps CONSUMER_WARPS * SLOTS_PER_WARP boxes
//     of loads in flight (v8: 4 x 4 x 8 KiB = 128 KiB, the whole SM's share);
//   - the transpose through shared memory: lane l reads chunk k of box row r = 32 g + l with one
//     conflict-free LDS.128 (v4's read), and writes its four floats into a dense staging tile of
//     32 output rows x BOX_ROWS output columns, out[4k + i][r]: 32 lanes, 32 consecutive
//     floats per store, conflict-free;
//   - the output leaves through a TMA store (UTMASTG) of the whole staging tile, issued by lane
//     0 and clipped at the matrix edges by the TMA unit; two staging tiles per warp alternate,
//     and `cp.async.bulk.wait_group.read 1` (lane 0, then __syncwarp) says the older one has
//     been read out before the warp overwrites it. No thread ever waits on a global store.
// One fence.proxy.async per lane per tile orders both generic-proxy accesses before the async
// proxy that follows them: its LDS of the slot before the TMA refill (write after read), and
// its STS of the staging tile before the TMA store reads it (read after write). __syncwarp then
// hands both to lane 0. Each full barrier has one waiting warp, so the ring needs no empty
// barriers: the warp's own progress (wait, read, fence, refill) is the release.
// A timeout stops only the warp that gave up (it has recorded its wait); its stores drain first.

// v11's TMA store with an L2 cache hint: createpolicy makes a 64-bit policy (here: every line
// it covers is evict_first, so the output's lines are the first L2 gives up once written back)
// and the store's .L2::cache_hint form carries it. Otherwise the same store as v8's: the
// staging tile at {column, row} of map_out, committed to the thread's bulk group.
__device__ __forceinline__ void store_tile_evict_first(const CUtensorMap* map,
                                                       const std::int32_t (&at)[2],
                                                       const float* staging) {
  std::uint64_t policy;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
  asm volatile(
      "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group.L2::cache_hint"
      " [%0, {%1, %2}], [%3], %4;"
      ::"l"(reinterpret_cast<std::uint64_t>(map)), "r"(at[0]), "r"(at[1]),
        "r"(tut::smem_addr(staging)), "l"(policy)
      : "memory");
}

// The pipeline itself (v8 and v10; BOXES_X = 1 is v8): each warp's tile is BOX_ROWS input rows
// x BOXES_X * 32 input columns, loaded as BOXES_X side-by-side BOX_ROWS x 32 boxes into one
// slot (one full-barrier phase for all of them), transposed into a staging tile of
// BOXES_X * 32 output rows x BOX_ROWS output columns, and stored with ONE TMA store (map_out's
// box: BOX_ROWS columns x BOXES_X * 32 rows, no swizzle, so up to 256 floats wide).
// v11 adds three knobs, at v8's and v10's values by default: GROUP > 0 numbers the tiles by
// GroupedTileGrid (bands of GROUP tile rows walked column by column, with 32-bit index math)
// instead of TileGrid's row-major order; EVICT_FIRST issues each TMA store with an L2
// evict_first cache policy (the output is never read again); STAGING_TILES = 1 gives each warp
// one staging tile instead of two, so that a second warp fits beside 32 KiB tiles.
template <int BOX_ROWS, int BOXES_X, int CONSUMER_WARPS, int SLOTS_PER_WARP, int GROUP = 0,
          bool EVICT_FIRST = false, int STAGING_TILES = 2>
__device__ __forceinline__ void warp_rings_transpose(const CUtensorMap& map_in_sw128,
                                                     const CUtensorMap& map_out, int n,
                                                     unsigned* d_error) {
  namespace ptx = cuda::ptx;
  static_assert(BOX_ROWS % 32 == 0 && BOX_ROWS <= 256, "whole 32-row groups, TMA box <= 256");
  static_assert(BOXES_X >= 1 && BOXES_X * TILE <= 256, "the store box's rows: at most 256");
  constexpr int BOX_FLOATS = BOX_ROWS * TILE;             // one load box
  constexpr std::uint32_t BOX_BYTES = BOX_FLOATS * 4;     // a multiple of 1024: boxes stay aligned
  constexpr int TILE_FLOATS = BOXES_X * BOX_FLOATS;       // one slot = one staging tile
  static_assert(STAGING_TILES == 1 || STAGING_TILES == 2, "per warp: fill one, store the other");
  float* s_slots = reinterpret_cast<float*>(aligned_dynamic_smem());  // [warps][SLOTS][tile]
  float* s_staging = s_slots + CONSUMER_WARPS * SLOTS_PER_WARP * TILE_FLOATS;  // [warps][2][tile]
  __shared__ __align__(8) std::uint64_t full[CONSUMER_WARPS * SLOTS_PER_WARP];
  using Grid = std::conditional_t<GROUP == 0, TileGrid<BOX_ROWS, BOXES_X * TILE>,
                                  GroupedTileGrid<BOX_ROWS, BOXES_X * TILE, GROUP>>;
  const Grid g(n);
  const std::size_t my_tiles = tut::tiles_of_this_block(g.num_tiles);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  // This warp's tiles: the block's tiles warp, warp + CONSUMER_WARPS, ...; its i-th one is
  // matrix tile tut::block_tile(warp + i * CONSUMER_WARPS).
  const std::size_t warp_tiles =
      my_tiles > static_cast<std::size_t>(warp) ? (my_tiles - 1 - warp) / CONSUMER_WARPS + 1 : 0;
  auto matrix_tile_of = [&](std::size_t i) { return tut::block_tile(warp + i * CONSUMER_WARPS); };
  // The boxes of a tile that start inside the matrix (v4's rule, on the right edge): a box
  // wholly outside is neither loaded nor counted, and its staging rows (output rows >= n) are
  // neither written nor stored, since the TMA store clips them. A tile of one box is inside.
  auto boxes_in = [&](int c0) {
    return BOXES_X == 1 ? 1 : min(BOXES_X, (n - c0 + TILE - 1) / TILE);
  };
  float* my_slots = s_slots + warp * SLOTS_PER_WARP * TILE_FLOATS;
  float* my_staging = s_staging + warp * STAGING_TILES * TILE_FLOATS;
  std::uint64_t* my_full = full + warp * SLOTS_PER_WARP;
  init_full_barriers(full);  // the one block barrier: every warp's barriers are initialised
  auto produce = [&](std::size_t i) {  // lane 0: this warp's tile i into its slot i % SLOTS
    const std::size_t matrix_tile = matrix_tile_of(i);
    const int s = static_cast<int>(i % SLOTS_PER_WARP);
    tut::perturb(tut::Perturb::kBeforeTmaIssue, static_cast<std::uint32_t>(i));
    std::int32_t load_at[BOXES_X][2];  // box b's {column, row}, innermost first
#pragma unroll
    for (int b = 0; b < BOXES_X; ++b)
      load_at[b][0] = g.col0(matrix_tile) + b * TILE, load_at[b][1] = g.row0(matrix_tile);
    const int nb = boxes_in(load_at[0][0]);
    // One arrival expecting every box's bytes (each box whole: the TMA unit zero-fills the part
    // below or right of the matrix), then the boxes, all completing on the same barrier.
    (void)ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared,
                                         &my_full[s], nb * BOX_BYTES);
#pragma unroll
    for (int b = 0; b < BOXES_X; ++b)  // BOXES_X loads per slot in the SASS, the first nb issued
      if (b < nb)  // box b starts inside the matrix
        ptx::cp_async_bulk_tensor(ptx::space_shared, ptx::space_global,
                                  my_slots + s * TILE_FLOATS + b * BOX_FLOATS, &map_in_sw128,
                                  load_at[b], &my_full[s]);
  };
  if (lane == 0)
    for (std::size_t i = 0; i < warp_tiles && i < SLOTS_PER_WARP; ++i) produce(i);  // prologue
  tut::RingPosition<SLOTS_PER_WARP> ring;
  for (std::size_t i = 0; i < warp_tiles; ++i, ring.advance()) {
    const int nb = boxes_in(g.col0(matrix_tile_of(i)));
    // Has my tile landed in my slot? (a timeout names this warp, its full[] entry and tile)
    const tut::WaitSite site = tut::WaitSite::consumer_warp(warp)
                                   .on(tut::Barrier::kFull, warp * SLOTS_PER_WARP + ring.slot)
                                   .at_tile(static_cast<unsigned>(i))
                                   .expecting(nb * BOX_BYTES);
    const bool landed = tut::wait_or_report(&my_full[ring.slot], ring.phase, d_error, site);
    if (__any_sync(0xffffffffu, !landed)) {  // a timeout: drain my stores, this warp stops
      if (lane == 0) ptx::cp_async_bulk_wait_group(ptx::n32_t<0>{});
      return;
    }
    // Staging tile i % 2 was last stored two tiles ago; at most one newer store may still read.
    // (One staging tile, v11: it was stored one tile ago, and that store must be done reading.)
    if (lane == 0) ptx::cp_async_bulk_wait_group_read(ptx::n32_t<STAGING_TILES - 1>{});
    __syncwarp();  // ...and every lane knows it before writing the tile again
    const float* slot = my_slots + ring.slot * TILE_FLOATS;  // BOXES_X boxes, 128B-swizzled rows
    float* staging = my_staging + static_cast<int>(i % STAGING_TILES) * TILE_FLOATS;
    // Box b (input columns 32 b ..) becomes staging rows 32 b .. 32 b + 31, out[c][r] = in[r][c]:
    // lane l reads chunk k of box row r = 32 g + l with one LDS.128 from its swizzled place
    // k ^ (r % 8) (the 8 lanes of a quarter-warp read rows r .. r + 7, so 8 different chunks:
    // all 32 banks, conflict-free), and writes its four floats to staging rows 4k .. 4k + 3 at
    // column r (32 lanes, 32 consecutive floats per STS: conflict-free). One 32-row group (8
    // chunks per lane) at a time: its 8 LDS.128 are issued before its STS, which the compiler
    // would not reorder by itself (slot and staging tile are both shared memory, so a store
    // might alias a later load). A box that starts right of the matrix is skipped (b >= nb).
#pragma unroll
    for (int b = 0; b < BOXES_X; ++b) {
      if (b >= nb) break;
      const float* box = slot + b * BOX_FLOATS;        // 128B-swizzled rows
      float* stage = staging + b * TILE * BOX_ROWS;    // [32 output rows][BOX_ROWS]
#pragma unroll
      for (int group = 0; group < BOX_ROWS / 32; ++group) {
        const int r = group * 32 + lane;  // my box row = my output column
        float4 v[TILE / 4];
#pragma unroll
        for (int k = 0; k < TILE / 4; ++k)  // chunk k of row r sits at chunk k ^ (r % 8)
          v[k] = *reinterpret_cast<const float4*>(box + r * TILE + ((k ^ (r & 7)) << 2));
#pragma unroll
        for (int k = 0; k < TILE / 4; ++k) {  // in[r][4k + i] = out[4k + i][r]
          stage[(4 * k + 0) * BOX_ROWS + r] = v[k].x;
          stage[(4 * k + 1) * BOX_ROWS + r] = v[k].y;
          stage[(4 * k + 2) * BOX_ROWS + r] = v[k].z;
          stage[(4 * k + 3) * BOX_ROWS + r] = v[k].w;
        }
      }
    }
    tut::perturb(tut::Perturb::kBeforeRelease, static_cast<std::uint32_t>(i));
    ptx::fence_proxy_async(ptx::space_shared);  // my LDS before the refill, my STS before the store
    __syncwarp();                               // the whole warp's reads and writes, to lane 0
    if (lane == 0) {
      const std::size_t matrix_tile = matrix_tile_of(i);
      const std::int32_t store_at[2] = {g.row0(matrix_tile), g.col0(matrix_tile)};  // transposed
      if constexpr (EVICT_FIRST) {  // v11: the same store, its lines marked first to leave L2
        store_tile_evict_first(&map_out, store_at, staging);
      } else {
        ptx::cp_async_bulk_tensor(ptx::space_global, ptx::space_shared, &map_out, store_at, staging);
      }
      ptx::cp_async_bulk_commit_group();
      if (i + SLOTS_PER_WARP < warp_tiles) produce(i + SLOTS_PER_WARP);  // the slot I just read
    }
  }
  if (lane == 0) ptx::cp_async_bulk_wait_group(ptx::n32_t<0>{});  // epilogue: stores complete
}

template <int BOX_ROWS, int CONSUMER_WARPS, int SLOTS_PER_WARP>
__global__ void __launch_bounds__(CONSUMER_WARPS * 32)
    transpose_v8_warp_rings_kernel(const __grid_constant__ CUtensorMap map_in_sw128,
                                   const __grid_constant__ CUtensorMap map_out, int n,
                                   unsigned* d_error) {
  warp_rings_transpose<BOX_ROWS, 1, CONSUMER_WARPS, SLOTS_PER_WARP>(map_in_sw128, map_out, n,
                                                                    d_error);
}

// ---------------------------------------------------------------------------------------------
// v10: v8's pipeline with tiles wide on both sides - several side-by-side boxes per slot
// ---------------------------------------------------------------------------------------------
// In v8 a load box is 32 columns wide: SWIZZLE_128B allows at most 128 bytes of inner extent,
// so every row of every load box is one 128-byte piece of a different 64 KiB matrix row (at
// N = 16384), while its store box writes BOX_ROWS * 4 contiguous bytes per output row. A plain
// copy reads and writes long rows. HYPOTHESIS (until a GPU run measures the rows below): the
// short read segments, 128-byte bursts scattered over many DRAM pages, are what keeps v8 short
// of a plain 2D copy.
// v10 makes the tile wide on both sides: BOX_ROWS input rows x BOXES_X * 32 input columns,
// loaded as BOXES_X side-by-side 32-column boxes issued back to back into one slot on one
// full-barrier phase, so each input row of a tile is BOXES_X * 128 contiguous bytes; the
// staging tile (BOXES_X * 32 output rows x BOX_ROWS output columns) leaves in ONE unswizzled
// TMA store, BOX_ROWS * 4 contiguous bytes per output row (an unswizzled box may be 256 floats
// wide, so the store side needs no split). Everything else is v8's protocol, unchanged: the
// ring per warp, one fence per lane per tile, the TMA store from two staging tiles.
// Right edge: a box that starts at column >= n is not loaded and not counted on the barrier
// (expect_tx is nb boxes); its staging rows are output rows >= n, which the TMA store clips,
// so the warp skips their transposition. Bottom edge: the TMA unit zero-fills the load and
// clips the store, as in v8.
template <int BOX_ROWS, int BOXES_X, int CONSUMER_WARPS, int SLOTS_PER_WARP>
__global__ void __launch_bounds__(CONSUMER_WARPS * 32)
    transpose_v10_wide_tiles_kernel(const __grid_constant__ CUtensorMap map_in_sw128,
                                    const __grid_constant__ CUtensorMap map_out, int n,
                                    unsigned* d_error) {
  static_assert(BOXES_X >= 2, "one box per slot is v8");
  warp_rings_transpose<BOX_ROWS, BOXES_X, CONSUMER_WARPS, SLOTS_PER_WARP>(map_in_sw128, map_out,
                                                                          n, d_error);
}

// ---------------------------------------------------------------------------------------------
// v11: v10's pipeline with the tiles in another order, and/or L2 hints
// ---------------------------------------------------------------------------------------------
// v10 at one block per SM keeps 160 KiB of loads in flight per SM (v10_wide_128x64_low), over
// four times DRAM latency x bandwidth per SM, yet stays near 90% of a memcpy. What is left to
// change is WHERE those bytes lie. HYPOTHESES (until a GPU run measures the rows below):
//   - the write side: in row-major order the 132 blocks write 132 different bands of output
//     rows at once, 512 bytes per output row and tile (GROUP: GroupedTileGrid above walks the
//     tiles so that the blocks write long runs of the same output rows together);
//   - the caches: the load map's L2 promotion at 256 B (the map, main.cu) and evict_first on
//     the stores (EVICT_FIRST: store_tile_evict_first) keep written-once lines from displacing
//     the input's lines in L2.
// The protocol is v8's, unchanged: per-warp rings, one fence per lane per tile, two staging
// tiles, wait_group.read 1 (with two staging tiles per warp the most a wait may leave open).
template <int BOX_ROWS, int BOXES_X, int CONSUMER_WARPS, int SLOTS_PER_WARP, int GROUP,
          bool EVICT_FIRST, int STAGING_TILES>
__global__ void __launch_bounds__(CONSUMER_WARPS * 32)
    transpose_v11_ordered_kernel(const __grid_constant__ CUtensorMap map_in_sw128,
                                 const __grid_constant__ CUtensorMap map_out, int n,
                                 unsigned* d_error) {
  static_assert(GROUP > 0 || EVICT_FIRST, "neither knob: that is v10");
  warp_rings_transpose<BOX_ROWS, BOXES_X, CONSUMER_WARPS, SLOTS_PER_WARP, GROUP, EVICT_FIRST,
                       STAGING_TILES>(map_in_sw128, map_out, n, d_error);
}

// ---------------------------------------------------------------------------------------------
// probe: one box, copied raw to global (the tests use it to see the out-of-bounds fill)
// ---------------------------------------------------------------------------------------------
__global__ void probe_box_kernel(const __grid_constant__ CUtensorMap map, int x, int y,
                                 float* __restrict__ d_box, unsigned* d_error) {
  float* box = reinterpret_cast<float*>(aligned_dynamic_smem());
  __shared__ __align__(8) std::uint64_t bar;
  if (threadIdx.x == 0) {
    cuda::ptx::mbarrier_init(&bar, 1);
    cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
  }
  __syncthreads();
  if (threadIdx.x == 0) load_box(box, &map, x, y, &bar, TILE_BYTES);
  if (!tut::wait_or_report(&bar, 0, d_error,
                           tut::WaitSite::warp(threadIdx.x / 32).on(tut::Barrier::kTile)
                               .expecting(TILE_BYTES)))
    return;
  for (int i = threadIdx.x; i < TILE * TILE; i += blockDim.x) d_box[i] = box[i];
}

// ---------------------------------------------------------------------------------------------
// Launchers: persistent grids (fewer blocks under the harness's lap check; any grid works)
// ---------------------------------------------------------------------------------------------
constexpr std::size_t RING_SMEM = std::size_t{STAGES} * TILE_BYTES + SMEM_ALIGN;  // 33 KiB
constexpr std::size_t STORE_SMEM = RING_SMEM + 2 * std::size_t{TILE_BYTES};        // 41 KiB

inline void launch_transpose_v0(const float* d_in, float* d_out, int n, int sms,
                                int blocks_per_sm, cudaStream_t s) {
  tut::launch_persistent(transpose_v0_cpasync_kernel, THREADS, 0, sms, blocks_per_sm, s, d_in,
                         d_out, n);
}

// v1 or v2 (`kernel`): the 8-slot ring of 32 x 32 boxes of `map`.
using RingKernel = void (*)(const CUtensorMap, float*, int, unsigned*);
inline void launch_transpose_ring(RingKernel kernel, const CUtensorMap& map, float* d_out, int n,
                                  unsigned* d_error, int sms, int blocks_per_sm, cudaStream_t s) {
  tut::launch_persistent(kernel, THREADS, RING_SMEM, sms, blocks_per_sm, s, map, d_out, n,
                         d_error);
}

// v3: the ring plus two dense staging boxes for the TMA stores.
inline void launch_transpose_v3(const CUtensorMap& map_in_sw128, const CUtensorMap& map_out,
                                int n, unsigned* d_error, int sms, int blocks_per_sm,
                                cudaStream_t s) {
  tut::launch_persistent(transpose_v3_tma_store_kernel, THREADS, STORE_SMEM, sms, blocks_per_sm,
                         s, map_in_sw128, map_out, n, d_error);
}

// v4-v7: RING_STAGES slots of BOXES_X boxes of BOX_ROWS x 32 (the map's box must be BOX_ROWS x 32).
template <int BOX_ROWS, int BOXES_X, int RING_STAGES>
void launch_transpose_v4(const CUtensorMap& map, float* d_out, int n, unsigned* d_error, int sms,
                         int blocks_per_sm, cudaStream_t s) {
  constexpr std::size_t smem =
      std::size_t{RING_STAGES} * BOXES_X * BOX_ROWS * TILE * 4 + SMEM_ALIGN;
  tut::launch_persistent(transpose_v4_tma_rowread_kernel<BOX_ROWS, BOXES_X, RING_STAGES>, THREADS,
                         smem, sms, blocks_per_sm, s, map, d_out, n, d_error);
}

// v8 and v10: per warp SLOTS_PER_WARP load slots and two staging tiles, each BOXES_X boxes of
// BOX_ROWS x 32 floats. map_in_sw128's box must be 32 x BOX_ROWS (columns x rows), map_out's
// BOX_ROWS x (BOXES_X * 32).
template <int BOX_ROWS, int BOXES_X, int CONSUMER_WARPS, int SLOTS_PER_WARP>
constexpr std::size_t warp_rings_smem() {
  return std::size_t{CONSUMER_WARPS} * (SLOTS_PER_WARP + 2) * BOXES_X * BOX_ROWS * TILE * 4 +
         SMEM_ALIGN;
}
using WarpRingsKernel = void (*)(const CUtensorMap, const CUtensorMap, int, unsigned*);
template <int BOX_ROWS, int BOXES_X, int CONSUMER_WARPS, int SLOTS_PER_WARP>
void launch_warp_rings(WarpRingsKernel kernel, const CUtensorMap& map_in_sw128,
                       const CUtensorMap& map_out, int n, unsigned* d_error, int sms,
                       int blocks_per_sm, cudaStream_t s) {
  constexpr std::size_t smem = warp_rings_smem<BOX_ROWS, BOXES_X, CONSUMER_WARPS, SLOTS_PER_WARP>();
  static_assert(smem <= 227 * 1024, "more dynamic shared memory than one block may have");
  tut::launch_persistent(kernel, CONSUMER_WARPS * 32, smem, sms, blocks_per_sm, s, map_in_sw128,
                         map_out, n, d_error);
}
template <int BOX_ROWS, int CONSUMER_WARPS, int SLOTS_PER_WARP>
void launch_transpose_v8(const CUtensorMap& map_in_sw128, const CUtensorMap& map_out, int n,
                         unsigned* d_error, int sms, int blocks_per_sm, cudaStream_t s) {
  launch_warp_rings<BOX_ROWS, 1, CONSUMER_WARPS, SLOTS_PER_WARP>(
      transpose_v8_warp_rings_kernel<BOX_ROWS, CONSUMER_WARPS, SLOTS_PER_WARP>, map_in_sw128,
      map_out, n, d_error, sms, blocks_per_sm, s);
}
template <int BOX_ROWS, int BOXES_X, int CONSUMER_WARPS, int SLOTS_PER_WARP>
void launch_transpose_v10(const CUtensorMap& map_in_sw128, const CUtensorMap& map_out, int n,
                          unsigned* d_error, int sms, int blocks_per_sm, cudaStream_t s) {
  launch_warp_rings<BOX_ROWS, BOXES_X, CONSUMER_WARPS, SLOTS_PER_WARP>(
      transpose_v10_wide_tiles_kernel<BOX_ROWS, BOXES_X, CONSUMER_WARPS, SLOTS_PER_WARP>,
      map_in_sw128, map_out, n, d_error, sms, blocks_per_sm, s);
}

// v11: v10's launch with STAGING_TILES staging tiles per warp (v10: 2).
template <int BOX_ROWS, int BOXES_X, int CONSUMER_WARPS, int SLOTS_PER_WARP, int GROUP,
          bool EVICT_FIRST, int STAGING_TILES = 2>
void launch_transpose_v11(const CUtensorMap& map_in_sw128, const CUtensorMap& map_out, int n,
                          unsigned* d_error, int sms, int blocks_per_sm, cudaStream_t s) {
  constexpr std::size_t smem = std::size_t{CONSUMER_WARPS} * (SLOTS_PER_WARP + STAGING_TILES) *
                                   BOXES_X * BOX_ROWS * TILE * 4 +
                               SMEM_ALIGN;
  static_assert(smem <= 227 * 1024, "more dynamic shared memory than one block may have");
  tut::launch_persistent(transpose_v11_ordered_kernel<BOX_ROWS, BOXES_X, CONSUMER_WARPS,
                                                      SLOTS_PER_WARP, GROUP, EVICT_FIRST,
                                                      STAGING_TILES>,
                         CONSUMER_WARPS * 32, smem, sms, blocks_per_sm, s, map_in_sw128, map_out,
                         n, d_error);
}

// One block; the box whose first element is column x, row y, raw (swizzled as the map says).
inline void launch_probe_box(const CUtensorMap& map, int x, int y, float* d_box,
                             unsigned* d_error, cudaStream_t s) {
  constexpr std::size_t smem = TILE_BYTES + SMEM_ALIGN;
  probe_box_kernel<<<1, THREADS, smem, s>>>(map, x, y, d_box, d_error);
}

}  // namespace ch12
