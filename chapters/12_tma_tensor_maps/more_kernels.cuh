// Chapter 12, second part: v3 (TMA load + TMA store) and the probe kernel the tests use to
// look at one box. Read kernels.cuh first; main.cu includes it before this. The negative v9 is
// in tests/negatives/12_tma_tensor_maps.cuh.
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
  init_full_barriers(full);
  if (t == 0) fill_ring(s_ring, &map_in_sw128, g, full, my_tiles);
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
      if (j + STAGES < my_tiles) load_tile(s_ring, &map_in_sw128, g, full, j + STAGES);
    }
  }
  if (t == 0) ptx::cp_async_bulk_wait_group(ptx::n32_t<0>{});  // epilogue: stores complete
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

// One block; the box whose first element is column x, row y, raw (swizzled as the map says).
inline void launch_probe_box(const CUtensorMap& map, int x, int y, float* d_box,
                             unsigned* d_error, cudaStream_t s) {
  constexpr std::size_t smem = TILE_BYTES + SMEM_ALIGN;
  probe_box_kernel<<<1, THREADS, smem, s>>>(map, x, y, d_box, d_error);
}

}  // namespace ch12
