/// @file main.cu
/// @brief Chapter 12's program: the tensor-map rules and the encoder fetched from the driver at
///        run time, the CPU reference, the Problem, the check sizes, the variant registry and
///        main. The lesson is in kernels.cuh and README.md; broken.cuh holds the negative.
//
// What the program does: for each variant, poison the output, launch, compare every word with
// the CPU transpose, then time it (run_chapter, common/harness.cuh).
#include <cuda.h>          // CUtensorMap and its enums (types only: nothing here links libcuda)
#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled_v12000
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "kernels.cuh"
#include "broken.cuh"
#include "common/bounded_wait.cuh"
#include "common/device_buffer.cuh"
#include "common/harness.cuh"

namespace ch12 {

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
/// `box_rows` (default TILE) makes a taller box: TILE columns x box_rows rows (v5, v6, v8);
/// `box_cols` (default TILE) a wider one (v8's staging tiles: box_rows columns x TILE rows).
/// `promotion`: how much the TMA unit fetches into L2 around each box row it reads (128 B, the
/// default: one box row of 32 floats; v11_l2hint's load map asks for 256 B).
inline CUtensorMap make_tile_map(
    const float* base, std::uint64_t cols, std::uint64_t rows, CUtensorMapSwizzle swizzle,
    std::uint32_t box_rows = TILE, std::uint32_t box_cols = TILE,
    CUtensorMapL2promotion promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_128B) {
  const std::string why = tensor_map_violation(base, cols, rows, box_cols, box_rows, swizzle);
  if (!why.empty()) {
    std::fprintf(stderr, "ch12: error: cannot describe this matrix to the TMA unit: %s\n",
                 why.c_str());
    std::exit(tut::kExitFail);
  }
  CUtensorMap map;
  const cuuint64_t dims[2] = {cols, rows};
  const cuuint64_t strides[1] = {cols * sizeof(float)};  // bytes from one row to the next
  const cuuint32_t box[2] = {box_cols, box_rows};
  const cuuint32_t elem_strides[2] = {1, 1};
  CU_CHECK(encode_tiled_fn()(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, const_cast<float*>(base),
                             dims, strides, box, elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                             swizzle, promotion,
                             CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));  // outside: zeros
  return map;
}

inline std::vector<std::uint32_t> reference_transpose(const std::vector<std::uint32_t>& in,
                                                      std::size_t n) {
  std::vector<std::uint32_t> out(n * n);
  for (std::size_t r = 0; r < n; ++r)
    for (std::size_t c = 0; c < n; ++c) out[c * n + r] = in[r * n + c];
  return out;
}

// --size is the side N of the square matrix (not bytes); each matrix is N*N*4 bytes.
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
    map_in_sw128_r64 = make_tile_map(in, n, n, CU_TENSOR_MAP_SWIZZLE_128B, 64);    // v8
    map_out_c64 = make_tile_map(out, n, n, CU_TENSOR_MAP_SWIZZLE_NONE, TILE, 64);  // v8 stores
    map_out_c128 = make_tile_map(out, n, n, CU_TENSOR_MAP_SWIZZLE_NONE, TILE, 128);
    // v10's stores: the staging tile, BOX_ROWS columns x BOXES_X * 32 rows, in one box.
    map_out_c64_r64 = make_tile_map(out, n, n, CU_TENSOR_MAP_SWIZZLE_NONE, 64, 64);
    map_out_c32_r128 = make_tile_map(out, n, n, CU_TENSOR_MAP_SWIZZLE_NONE, 128, 32);
    map_out_c128_r64 = make_tile_map(out, n, n, CU_TENSOR_MAP_SWIZZLE_NONE, 64, 128);
    // v11_l2hint: v10_wide_128x64's load boxes (32 x 128), promoted to L2 in 256-byte pieces.
    map_in_sw128_r128_l2p256 = make_tile_map(in, n, n, CU_TENSOR_MAP_SWIZZLE_128B, 128, TILE,
                                             CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
  }
  void poison(cudaStream_t s) { tut::poison_words_and_error(s, d_out, d_error); }
  tut::VerifyResult verify(cudaStream_t s, int /*reference*/) {
    return tut::compare_words_and_error(
        s, d_out, want, [&] { return reference_transpose(h_in, n); }, d_error);
  }
  double work() const { return 2.0 * 4.0 * static_cast<double>(elems); }
  std::string describe() const {
    return std::to_string(n) + " x " + std::to_string(n) + " floats (" +
           tut::format_bytes(4.0 * double(elems)) + " per matrix)";
  }
  const float* in() const { return reinterpret_cast<const float*>(d_in.data()); }
  float* out() { return reinterpret_cast<float*>(d_out.data()); }
  int sms() const { return cfg.device.sm_count; }
  unsigned* err() { return d_error.data(); }
  int blocks_per_sm() const { return tut::blocks_per_sm(cfg); }  // --blocks-per-sm (_low rows)

  tut::RunConfig cfg;
  int n;
  std::size_t elems;
  tut::DeviceBuffer<std::uint32_t> d_in, d_out;
  tut::ErrorWord d_error;
  std::vector<std::uint32_t> h_in, want;
  CUtensorMap map_in{}, map_in_sw128{}, map_out{}, map_in_sw128_r128{}, map_in_sw128_r256{};
  CUtensorMap map_in_sw128_r64{}, map_out_c64{}, map_out_c128{};  // v8: 32 x 64 in, 64 x 32 out
  CUtensorMap map_out_c64_r64{}, map_out_c32_r128{}, map_out_c128_r64{};  // v10's store boxes
  CUtensorMap map_in_sw128_r128_l2p256{};  // v11_l2hint's load map
};

// Check sizes (the matrix side N): one partial box; one box minus a column chunk; a box plus 4
// (edges on both sides); boxes plus ragged edges; several waves of blocks. The largest feeds
// the harness's lap check (two blocks): N = 2052 is 65 x 65 = 4225 tiles of 32 x 32, over 2000
// per block, more than 260 laps of the 8-slot rings; the tallest boxes (256 x 32, v6, 3 slots)
// give 9 x 65 = 585 tiles, 292 per block, 97 laps; v7's 32 x 128 tiles (4 slots) 65 x 17 =
// 1105, 552 per block, 138 laps; v8's 64 x 32 tiles 33 x 65 = 2145, 1072 per block, 268 per
// warp, 67 laps of each warp's 4 slots (its 2 staging tiles alternate 134 times each), and
// v8's 128 x 32 tiles 17 x 65 = 1105, 552 per block, 276 per warp of two, 69 laps;
// v8_rings_8warps_low's 32 x 32 tiles give 264 per warp of eight, 66 laps of 4 slots;
// v8_rings_box32_full 528 per warp, 132 laps; v8_rings_6warps_low 178 per warp, 89 laps of 2.
// v10's 64 x 64 tiles (v10_wide_tiles_*) 33 x 33 = 1089, 544 per block, 272 per warp of two,
// 68 laps of 4 slots (each staging tile alternates 136 times); v10_wide_in512_low's 32 x 128
// tiles 65 x 17 = 1105, 552 per block, 276 per warp, 69 laps; v10_wide_128x64_low's 128 x 64
// tiles 17 x 33 = 561, 280 per block and its one warp, 56 laps of 5 slots (v11's rows too;
// v11_2warps_128x64_low 140 per warp, 70 laps of 2 slots, its one staging tile reused 140
// times). v11's bands of 8 tile rows at N = 2052: 8, 8 and a last band of 1. N = 2052 = 32 * 64
// + 4 = 16 * 128 + 4 also gives v10 its right-edge tiles with one box inside (the others are
// neither loaded nor stored), as do 260 and 1028; at 28 the second box of v10's 64-wide tile
// lies outside the matrix, at 36 and 100 it is a partial box.
// Every ring wraps far more than 3 times. N = 4 and 28 leave three of v8's four warps (seven
// of eight, five of six; one of v10's two) without a tile.
inline const std::vector<std::uint64_t> kCheckSizes = {4, 28, 36, 100, 260, 1028, 2052};

// Laps of a ring of `stages` slots that each block of a `blocks`-block grid makes at side n,
// tiles of box_rows x box_cols (the fewest, for the block with the fewest tiles).
inline std::uint64_t ring_laps(std::uint64_t n, int box_rows, int box_cols, int stages,
                               int blocks) {
  const std::uint64_t tiles = ((n + box_rows - 1) / box_rows) * ((n + box_cols - 1) / box_cols);
  return tiles / blocks / stages;
}


// v11's rows all run 128 x 64 tiles (two 32 x 128 boxes per slot) from the 128-row load map
// into the 64-row store map, at --blocks-per-sm blocks per SM; they differ in the warps, the
// slots per warp, the tile order (GROUP: GroupedTileGrid in kernels.cuh), the staging tiles per
// warp, and L2_HINTS: the load map that promotes to L2 in 256-byte pieces together with TMA
// stores under an evict_first policy.
template <int WARPS, int SLOTS, int GROUP, bool L2_HINTS, int STAGING_TILES = 2>
void launch_v11_128x64(Problem& p, cudaStream_t s) {
  const CUtensorMap& in = L2_HINTS ? p.map_in_sw128_r128_l2p256 : p.map_in_sw128_r128;
  launch_transpose_v11<128, 2, WARPS, SLOTS, GROUP, L2_HINTS, STAGING_TILES>(
      in, p.map_out_c128_r64, p.n, p.err(), p.sms(), p.blocks_per_sm(), s);
}

// The variant registry, in reading order. The _low rows run at --blocks-per-sm blocks per SM
// (default 1), the others at full occupancy (0). v4-v7 read boxes of BOX_ROWS x 32: each uses
// the swizzled map with that box.
inline std::vector<tut::Variant<Problem>> variants() {
  tut::VariantList<Problem> v;
  const char* same_at_low = "the same at --blocks-per-sm blocks per SM";
  v.add("v0_cpasync_full", "v0 cp.async-fed, full occ",
        "baseline: 32x32 tiles by 16 B cp.async per thread, padded rows, 8-stage ring",
        [](Problem& p, cudaStream_t s) { launch_transpose_v0(p.in(), p.out(), p.n, p.sms(), 0, s); });
  v.add("v0_cpasync_low", "v0 cp.async-fed, low occ", same_at_low,
        [](Problem& p, cudaStream_t s) {
          launch_transpose_v0(p.in(), p.out(), p.n, p.sms(), p.blocks_per_sm(), s);
        });
  v.add("v1_tma_ptx_full", "v1 TMA 2D PTX, no swizzle",
        "raw PTX cp.async.bulk.tensor.2d, dense box: 32-way conflicts on column reads",
        [](Problem& p, cudaStream_t s) {
          launch_transpose_ring(transpose_v1_tma_ptx_kernel, p.map_in, p.out(), p.n, p.err(),
                                p.sms(), 0, s);
        });
  v.add("v2_tma_sw128_full", "v2 TMA 2D swizzle128, full",
        "cuda::ptx tensor load, SWIZZLE_128B box: 4-way conflicts; full occupancy",
        [](Problem& p, cudaStream_t s) {
          launch_transpose_ring(transpose_v2_tma_swizzle_kernel, p.map_in_sw128, p.out(), p.n,
                                p.err(), p.sms(), 0, s);
        });
  v.add("v2_tma_sw128_low", "v2 TMA 2D swizzle128, low", same_at_low,
        [](Problem& p, cudaStream_t s) {
          launch_transpose_ring(transpose_v2_tma_swizzle_kernel, p.map_in_sw128, p.out(), p.n,
                                p.err(), p.sms(), p.blocks_per_sm(), s);
        });
  v.add("v3_tma_store_full", "v3 TMA load + TMA store",
        "swizzled load, transpose into a staging box, fence.proxy.async, UTMASTG; full occ",
        [](Problem& p, cudaStream_t s) {
          launch_transpose_v3(p.map_in_sw128, p.map_out, p.n, p.err(), p.sms(), 0, s);
        });
  v.add("v4_tma_rowread_full", "v4 TMA sw128, LDS.128 reads",
        "v2's box read conflict-free along rows (LDS.128); 32x32 tiles, 8-slot ring, full occ",
        [](Problem& p, cudaStream_t s) {
          launch_transpose_v4<32, 1, 8>(p.map_in_sw128, p.out(), p.n, p.err(), p.sms(), 0, s);
        });
  v.add("v5_tma_tall128_full", "v5 TMA 128x32 boxes, LDS.128",
        "v4 with 128-row x 32-col boxes (16 KiB, 4-slot ring): 512 B written per output row",
        [](Problem& p, cudaStream_t s) {
          launch_transpose_v4<128, 1, 4>(p.map_in_sw128_r128, p.out(), p.n, p.err(), p.sms(), 0,
                                         s);
        });
  v.add("v6_tma_tall256_full", "v6 TMA 256x32 boxes, LDS.128",
        "v4 with 256-row x 32-col boxes (32 KiB, 3-slot ring): 1 KiB written per output row",
        [](Problem& p, cudaStream_t s) {
          launch_transpose_v4<256, 1, 3>(p.map_in_sw128_r256, p.out(), p.n, p.err(), p.sms(), 0,
                                         s);
        });
  v.add("v7_tma_wide4x32_full", "v7 TMA 4 boxes 32x32 per slot",
        "control: v5's 16 KiB slots, 4-slot ring and cadence, but 32x128 tiles: 128 B per row",
        [](Problem& p, cudaStream_t s) {
          launch_transpose_v4<32, 4, 4>(p.map_in_sw128, p.out(), p.n, p.err(), p.sms(), 0, s);
        });
  v.add("v8_warp_rings_full", "v8 warp rings + TMA stores",
        "a pipeline per warp: 4-slot ring of 64x32 boxes, transpose, TMA store from 2 staging "
        "tiles; 4 warps x 4 x 8 KiB = 128 KiB of loads in flight per block, no block barrier",
        [](Problem& p, cudaStream_t s) {
          launch_transpose_v8<64, 4, 4>(p.map_in_sw128_r64, p.map_out_c64, p.n, p.err(), p.sms(),
                                        0, s);
        });
  v.add("v8_warp_rings_low", "v8 warp rings, low", same_at_low,
        [](Problem& p, cudaStream_t s) {
          launch_transpose_v8<64, 4, 4>(p.map_in_sw128_r64, p.map_out_c64, p.n, p.err(), p.sms(),
                                        p.blocks_per_sm(), s);
        });
  v.add("v8_rings_tall128_low", "v8 128x32 boxes, 2 warps, low",
        "v8 with 128x32 boxes (16 KiB) and 2 warps: the same 128 KiB in flight, 512 B written "
        "per output row and tile instead of 256 B; at --blocks-per-sm blocks per SM",
        [](Problem& p, cudaStream_t s) {
          launch_transpose_v8<128, 2, 4>(p.map_in_sw128_r128, p.map_out_c128, p.n, p.err(),
                                         p.sms(), p.blocks_per_sm(), s);
        });
  // v8 at other warp counts and blocks per SM (the same kernel, other template arguments):
  // does the issue of 4 warps per SM limit v8, or the bytes in flight?
  v.add("v8_rings_8warps_low", "v8 32x32 boxes, 8 warps, low",
        "v8 with 32x32 boxes (4 KiB) and 8 warps of 4 slots: the same 128 KiB of loads in "
        "flight as v8, twice the warps issuing LDS/STS; 193 KiB, so at most one block per SM "
        "(the _low rows ask for --blocks-per-sm)",
        [](Problem& p, cudaStream_t s) {
          const int blocks_per_sm = p.blocks_per_sm();
          launch_transpose_v8<32, 8, 4>(p.map_in_sw128, p.map_out, p.n, p.err(), p.sms(),
                                        blocks_per_sm, s);
        });
  v.add("v8_rings_box32_full", "v8 32x32 boxes, 4 warps, 2 blocks/SM",
        "v8 with 32x32 boxes and 4 warps of 4 slots: 97 KiB per block, two blocks per SM, so "
        "per SM the same 8 warps and 128 KiB of loads in flight as v8_rings_8warps_low",
        [](Problem& p, cudaStream_t s) {
          launch_transpose_v8<32, 4, 4>(p.map_in_sw128, p.map_out, p.n, p.err(), p.sms(), 0, s);
        });
  v.add("v8_rings_6warps_low", "v8 64x32 boxes, 6 warps x 2 slots, low",
        "v8 with 6 warps of 2 slots (64x32 boxes): 96 KiB of loads in flight instead of 128, "
        "1.5 times the warps; 193 KiB, at --blocks-per-sm blocks per SM",
        [](Problem& p, cudaStream_t s) {
          launch_transpose_v8<64, 6, 2>(p.map_in_sw128_r64, p.map_out_c64, p.n, p.err(), p.sms(),
                                        p.blocks_per_sm(), s);
        });
  // v10: v8's pipeline on tiles of BOXES_X side-by-side boxes, so both the input rows and the
  // output rows of a tile are long. The first three rows keep v8_rings_tall128_low's budget
  // (2 warps x 4 slots of 16 KiB = 128 KiB of loads in flight, 193 KiB) and move only the
  // segment lengths (input bytes / output bytes per row and tile): v8_rings_tall128_low
  // 128 / 512, v10_wide_tiles 256 / 256, v10_wide_in512 512 / 128.
  v.add_low_and_full(
      "v10_wide_tiles", "v10 64x64 tiles (2 boxes), 2 warps",
      "v8 with 64x64 tiles: two side-by-side 32x64 boxes per 16 KiB slot, 2 warps x 4 slots "
      "(128 KiB of loads in flight, 193 KiB: one block per SM at full occupancy too), 256 B per "
      "input row and per output row",
      [](Problem& p, cudaStream_t s, int blocks_per_sm) {
        launch_transpose_v10<64, 2, 2, 4>(p.map_in_sw128_r64, p.map_out_c64_r64, p.n, p.err(),
                                          p.sms(), blocks_per_sm, s);
      });
  // The controls (at --blocks-per-sm blocks per SM): 32x128 tiles, four 32x32 boxes per slot,
  // on the same budget; 128x64 tiles, two 32x128 boxes per 32 KiB slot, on one warp of 5 slots
  // (160 KiB of loads in flight, 225 KiB), the only warp count that fits.
  v.add("v10_wide_in512_low", "v10 32x128 tiles (4 boxes), 2 warps, low",
        "control: v10 with 32x128 tiles, 512 B per input row, 128 B per output row",
        [](Problem& p, cudaStream_t s) {
          launch_transpose_v10<32, 4, 2, 4>(p.map_in_sw128, p.map_out_c32_r128, p.n, p.err(),
                                            p.sms(), p.blocks_per_sm(), s);
        });
  v.add("v10_wide_128x64_low", "v10 128x64 tiles, 1 warp x 5 slots, low",
        "control: v10 with 128x64 tiles on one warp, 256 B per input row, 512 B per output row",
        [](Problem& p, cudaStream_t s) {
          const CUtensorMap &in = p.map_in_sw128_r128, &out = p.map_out_c128_r64;
          launch_transpose_v10<128, 2, 1, 5>(in, out, p.n, p.err(), p.sms(), p.blocks_per_sm(), s);
        });
  // v11: v10_wide_128x64_low (one warp x 5 slots of 128x64 tiles, 160 KiB of loads in
  // flight, one block per SM) with the tiles in another order, or with L2 hints; the rest is
  // v10. GroupedTileGrid (kernels.cuh) says which patch of the matrix the grid works in.
  v.add("v11_outrows_128x64_low", "v11 128x64, column-major tile order, low",
        "v10_wide_128x64_low with the tiles walked down the tile columns: the blocks together "
        "write whole output rows (and read 256 B runs of many input rows)",
        launch_v11_128x64<1, 5, kWholeColumns, false>);
  v.add("v11_band8_128x64_low", "v11 128x64, bands of 8 tile rows, low",
        "v10_wide_128x64_low with bands of 8 tile rows walked column by column: about 4 KiB "
        "runs of each input row and of each output row across the grid at 132 SMs",
        launch_v11_128x64<1, 5, 8, false>);
  v.add("v11_l2hint_128x64_low", "v11 128x64, L2 256B promotion + evict_first stores, low",
        "v10_wide_128x64_low (row-major order) with the load map's L2 promotion at 256 B and "
        "every TMA store under an L2 evict_first cache policy",
        launch_v11_128x64<1, 5, 0, true>);
  v.add("v11_band8hint_128x64_low", "v11 128x64, bands of 8 + L2 hints, low",
        "both: v11_band8_128x64_low's order with v11_l2hint_128x64_low's load map and stores",
        launch_v11_128x64<1, 5, 8, true>);
  // The controls for the order: GROUP = 1 is row-major again (bands of one tile row), with
  // v11's 32-bit index math instead of TileGrid's 64-bit division; and the same order on two
  // warps of 2 slots and ONE staging tile each (2 x 3 x 32 KiB = 192 KiB; 128 KiB of loads in
  // flight), which halves the instructions each warp issues per byte of the SM's share.
  v.add("v11_idx32_128x64_low", "v11 128x64, row-major, 32-bit index math, low",
        "control: v10_wide_128x64_low's order (bands of one tile row) with v11's 32-bit tile "
        "index arithmetic instead of 64-bit division",
        launch_v11_128x64<1, 5, 1, false>);
  v.add("v11_2warps_128x64_low", "v11 128x64, 2 warps x 2 slots, 1 staging, low",
        "v11_idx32_128x64_low on two warps of 2 slots and one staging tile each (192 KiB, "
        "128 KiB of loads in flight): two warps issue the transposition",
        launch_v11_128x64<2, 2, 1, false, 1>);
  // The two that each beat v10 in a development run, together: the column-major order on two
  // warps of 2 slots and one staging tile each.
  v.add("v11_2warps_cols_128x64_low", "v11 128x64, 2 warps, column-major order, low",
        "v11_2warps_128x64_low walking the tiles in v11_outrows_128x64_low's column-major order",
        launch_v11_128x64<2, 2, kWholeColumns, false, 1>);
  v.add("v11_2warps_cols_l2hint_128x64_low", "v11 128x64, 2 warps, column-major order, L2 hints, low",
        "v11_2warps_cols_128x64_low with v11_l2hint_128x64_low's load map and evict_first stores",
        launch_v11_128x64<2, 2, kWholeColumns, true, 1>);
  add_negatives(v);  // broken.cuh
  return v.list;
}

// The chapter main() hands to tut::run_chapter(): name, heading, registry, sizes, options.
// The lesson (the tour's pair): the TMA-fed transpose with tall boxes against the
// cp.async-fed one, both at full occupancy (the regime the chapter's table compares).
inline tut::Chapter<Problem> chapter() {
  tut::Chapter<Problem> ch("ch12_tma_tensor_maps",
      variants(), "v6_tma_tall256_full", "v0_cpasync_full",
      "Chapter 12: TMA tensor maps (cp.async.bulk.tensor.2d, swizzle, TMA store)");
  ch.min_cc_major = 9;  // TMA: sm_90
  ch.size_help =
      "the matrix side N (not bytes): an N x N float matrix, N a multiple of 4 (TMA's 16-byte "
      "row-pitch rule); default 16384 = 1 GiB per matrix";
  ch.size_multiple = 4;
  ch.max_size = 32768;
  ch.default_size = [](const tut::DeviceSummary&) { return std::uint64_t{16384}; };
  ch.check_sizes = kCheckSizes;  // why these: above
  ch.device_bytes = [](std::uint64_t n) { return 4 * 4 * n * n + (std::size_t{64} << 20); };
  ch.extra_options = {tut::blocks_per_sm_option("blocks per SM for the *_low variants")};
  return ch;
}

}

// A test includes this file with TUTORIAL_CHAPTER_TEST defined, for the Problem and the registry.
#ifndef TUTORIAL_CHAPTER_TEST
int main(int argc, char** argv) { return tut::run_chapter(argc, argv, ch12::chapter()); }
#endif  // TUTORIAL_CHAPTER_TEST
