// Chapter 12, second part: v3 (TMA load + TMA store), the negative v9, and the probe kernel
// the tests use to look at one box. Read kernels.cuh first; main.cu includes it before this.
#pragma once

#include <cuda.h>
#include <cuda/ptx>
#include <cuda_runtime.h>

#include <cstdint>

namespace ch12 {

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
  const int t = threadIdx.x, lane = t % 32, warp = t / 32;
  if (t == 0) {
    for (int s = 0; s < STAGES; ++s) ptx::mbarrier_init(&full[s], 1);
    ptx::fence_proxy_async(ptx::space_shared);
  }
  __syncthreads();
  auto produce = [&](std::size_t j) {
    const std::size_t tile = tut::block_tile(j);
    load_box(s_ring + (j % STAGES) * TILE * TILE, &map_in_sw128, g.col0(tile), g.row0(tile),
             &full[j % STAGES], TILE_BYTES);
  };
  if (t == 0)
    for (std::size_t j = 0; j < my_tiles && j < STAGES; ++j) produce(j);
  tut::RingPosition<STAGES> ring;
  for (std::size_t j = 0; j < my_tiles; ++j, ring.advance()) {
    const bool landed = tut::wait_parity_bounded(&full[ring.slot], ring.phase);
    if (t == 0) ptx::cp_async_bulk_wait_group_read(ptx::n32_t<1>{});  // staging j&1 free
    if (__syncthreads_or(!landed)) {
      if (t == 0) {
        atomicOr(d_error, tut::kErrorWaitTimedOut);
        ptx::cp_async_bulk_wait_group(ptx::n32_t<0>{});
      }
      return;
    }
    const float* box = s_ring + ring.slot * TILE * TILE;
    float* stage = s_out + (j & 1) * TILE * TILE;  // [32 out rows = c][32 out cols = r]
#pragma unroll
    for (int k = 0; k < TILE / WARPS; ++k) {
      const int c = warp + k * WARPS;
      stage[c * TILE + lane] = box[swizzled_128b(lane, c)];
    }
    ptx::fence_proxy_async(ptx::space_shared);  // my STS -> visible to the TMA store
    __syncthreads();                            // staging box complete; slot consumed
    if (t == 0) {
      const std::size_t tile = tut::block_tile(j);
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
// v9 (negative): v2 with the box coordinates given row first
// ---------------------------------------------------------------------------------------------
// TMA coordinates go innermost first, {column, row}. Given {row, column}, every tile loads its
// mirror image across the diagonal: only diagonal tiles come out right.
__global__ void __launch_bounds__(THREADS)
    transpose_v9_swapped_coords_kernel(const __grid_constant__ CUtensorMap map_in_sw128,
                                       float* __restrict__ d_out, int n, unsigned* d_error) {
  namespace ptx = cuda::ptx;
  float* s_ring = reinterpret_cast<float*>(aligned_dynamic_smem());
  __shared__ __align__(8) std::uint64_t full[STAGES];
  const TileGrid<> g(n);
  const std::size_t my_tiles = tut::tiles_of_this_block(g.num_tiles);
  const int t = threadIdx.x;
  if (t == 0) {
    for (int s = 0; s < STAGES; ++s) ptx::mbarrier_init(&full[s], 1);
    ptx::fence_proxy_async(ptx::space_shared);
  }
  __syncthreads();
  auto produce = [&](std::size_t j) {
    const std::size_t tile = tut::block_tile(j);
    load_box(s_ring + (j % STAGES) * TILE * TILE, &map_in_sw128,
             g.row0(tile), g.col0(tile),  // BUG: {row, column}; TMA wants {column, row}
             &full[j % STAGES], TILE_BYTES);
  };
  if (t == 0)
    for (std::size_t j = 0; j < my_tiles && j < STAGES; ++j) produce(j);
  tut::RingPosition<STAGES> ring;
  for (std::size_t j = 0; j < my_tiles; ++j, ring.advance()) {
    if (!block_wait_parity_bounded(&full[ring.slot], ring.phase, d_error)) return;
    const std::size_t tile = tut::block_tile(j);
    const float* box = s_ring + ring.slot * TILE * TILE;
    store_transposed(d_out, n, g.row0(tile), g.col0(tile),
                     [&](int r, int c) { return box[swizzled_128b(r, c)]; });
    ptx::fence_proxy_async(ptx::space_shared);
    __syncthreads();
    if (t == 0 && j + STAGES < my_tiles) produce(j + STAGES);
  }
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
  if (!tut::wait_parity_bounded(&bar, 0)) {
    atomicOr(d_error, tut::kErrorWaitTimedOut);
    return;
  }
  for (int i = threadIdx.x; i < TILE * TILE; i += blockDim.x) d_box[i] = box[i];
}

// ---------------------------------------------------------------------------------------------
// Launchers
// ---------------------------------------------------------------------------------------------
constexpr std::size_t STORE_SMEM = RING_SMEM + 2 * std::size_t{TILE_BYTES};  // 41 KiB

inline void launch_transpose_v3(const CUtensorMap& map_in_sw128, const CUtensorMap& map_out,
                                int n, unsigned* d_error, int sms, int per_sm, cudaStream_t s) {
  const unsigned grid =
      tut::persistent_grid(transpose_v3_tma_store_kernel, THREADS, sms, per_sm, STORE_SMEM);
  transpose_v3_tma_store_kernel<<<grid, THREADS, STORE_SMEM, s>>>(map_in_sw128, map_out, n,
                                                                  d_error);
}

inline void launch_transpose_v9(const CUtensorMap& map_in_sw128, float* d_out, int n,
                                unsigned* d_error, int sms, cudaStream_t s) {
  const unsigned grid =
      tut::persistent_grid(transpose_v9_swapped_coords_kernel, THREADS, sms, 0, RING_SMEM);
  transpose_v9_swapped_coords_kernel<<<grid, THREADS, RING_SMEM, s>>>(map_in_sw128, d_out, n,
                                                                      d_error);
}

// One block; the box whose first element is column x, row y, raw (swizzled as the map says).
inline void launch_probe_box(const CUtensorMap& map, int x, int y, float* d_box,
                             unsigned* d_error, cudaStream_t s) {
  constexpr std::size_t smem = TILE_BYTES + SMEM_ALIGN;
  probe_box_kernel<<<1, THREADS, smem, s>>>(map, x, y, d_box, d_error);
}

}  // namespace ch12
