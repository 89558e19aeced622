// Chapter 12 kernels at edge shapes against the CPU reference; the TMA out-of-bounds fill;
// the tensor-map rules; the negative variant must fail.
#include <gtest/gtest.h>

#include <cstring>

#include "gpu_test.cuh"
#include "variant_test.cuh"
#define TUTORIAL_CHAPTER_TEST  // the chapter's program without its main(): Problem, variants()
#include "main.cu"
#include "common/launch.cuh"

namespace {

tut::RunConfig config(std::uint64_t n, int blocks_per_sm = 1) {
  return tut_test::test_config(n, 12, {{"blocks-per-sm", blocks_per_sm}});
}

tut::VerifyResult run_variant(const std::string& key, std::uint64_t n, int blocks_per_sm = 1) {
  return tut_test::run_variant(config(n, blocks_per_sm), ch12::variants(), key);
}

// Tiny (one partial box), just under a box, a box + 4, ragged edges, many tiles.
const std::uint64_t kSides[] = {4, 28, 32, 36, 100, 1028, 4100};

class Positive : public ::testing::TestWithParam<std::string> {};

TEST_P(Positive, MatchesReferenceAtEdgeShapes) {
  SKIP_UNLESS_GPU(9, 0);
  for (std::uint64_t n : kSides) {
    const tut::VerifyResult r = run_variant(GetParam(), n);
    EXPECT_TRUE(r.ok()) << GetParam() << " N=" << n << ": " << r.summary() << "\n" << r.details();
  }
}

INSTANTIATE_TEST_SUITE_P(Ch12, Positive,
                         ::testing::Values("v0_cpasync_full", "v0_cpasync_low", "v1_tma_ptx_full",
                                           "v2_tma_sw128_full", "v2_tma_sw128_low",
                                           "v3_tma_store_full", "v4_tma_rowread_full",
                                           "v5_tma_tall128_full", "v6_tma_tall256_full",
                                           "v7_tma_wide4x32_full", "v8_warp_rings_full",
                                           "v8_warp_rings_low", "v8_rings_tall128_low",
                                           "v8_rings_8warps_low", "v8_rings_box32_full",
                                           "v8_rings_6warps_low", "v10_wide_tiles_low",
                                           "v10_wide_tiles_full", "v10_wide_in512_low",
                                           "v10_wide_128x64_low", "v11_outrows_128x64_low",
                                           "v11_band8_128x64_low", "v11_l2hint_128x64_low",
                                           "v11_band8hint_128x64_low", "v11_idx32_128x64_low",
                                           "v11_2warps_128x64_low", "v11_2warps_cols_128x64_low",
                                           "v11_2warps_cols_l2hint_128x64_low"));

// Every ring variant, with the grid capped at two blocks at the largest check size: the
// harness's lap check, here per variant (the rings wrap hundreds of times).
TEST_P(Positive, MatchesReferenceWhenTheRingWraps) {
  SKIP_UNLESS_GPU(9, 0);
  tut::ScopedGridCap two_blocks(2);
  const tut::VerifyResult r = run_variant(GetParam(), ch12::kCheckSizes.back());
  EXPECT_TRUE(r.ok()) << r.summary() << "\n" << r.details();
}

// Host only: the largest check size gives each of two blocks at least 3 laps of every ring.
TEST(Ch12Laps, LargestCheckSizeLapsEveryRing) {
  const std::uint64_t n = ch12::kCheckSizes.back();
  EXPECT_GE(ch12::ring_laps(n, 32, 32, ch12::STAGES, 2), 3u);  // v0-v4, v9
  EXPECT_GE(ch12::ring_laps(n, 128, 32, 4, 2), 3u);            // v5
  EXPECT_GE(ch12::ring_laps(n, 256, 32, 3, 2), 3u);            // v6
  EXPECT_GE(ch12::ring_laps(n, 32, 128, 4, 2), 3u);            // v7
  // v8: each of a block's 4 (2) warps has its own 4-slot ring of 64 x 32 (128 x 32) tiles, and
  // takes every 4th (2nd) of the block's tiles: its laps are the block's over 4 x 4 (2 x 4) slots.
  EXPECT_GE(ch12::ring_laps(n, 64, 32, 4 * 4, 2), 3u);
  EXPECT_GE(ch12::ring_laps(n, 128, 32, 2 * 4, 2), 3u);
  EXPECT_GE(ch12::ring_laps(n, 32, 32, 8 * 4, 2), 3u);  // v8_rings_8warps_low
  EXPECT_GE(ch12::ring_laps(n, 32, 32, 4 * 4, 2), 3u);  // v8_rings_box32_full
  EXPECT_GE(ch12::ring_laps(n, 64, 32, 6 * 2, 2), 3u);  // v8_rings_6warps_low
  // v10: v8's per-warp rings on tiles of side-by-side boxes (rows x cols of the whole tile).
  EXPECT_GE(ch12::ring_laps(n, 64, 64, 2 * 4, 2), 3u);   // v10_wide_tiles_*
  EXPECT_GE(ch12::ring_laps(n, 32, 128, 2 * 4, 2), 3u);  // v10_wide_in512_low
  EXPECT_GE(ch12::ring_laps(n, 128, 64, 1 * 5, 2), 3u);  // v10_wide_128x64_low, v11_*
  EXPECT_GE(ch12::ring_laps(n, 128, 64, 2 * 2, 2), 3u);  // v11_2warps_128x64_low, _cols, _cols_l2hint
}

// v11's tile orders (host-side, no GPU): every tile number lands on a distinct tile of the
// matrix, the bands go down a tile column first, and a short last band (N = 2052 with 128-row
// tiles: 17 tile rows, bands of 8, 8 and 1) still covers every tile.
template <int GROUP>
void expect_a_permutation(int n) {
  const ch12::GroupedTileGrid<128, 64, GROUP> g(n);
  std::vector<int> seen(g.num_tiles, 0);
  for (std::size_t t = 0; t < g.num_tiles; ++t) {
    const int r = g.row0(t), c = g.col0(t);
    ASSERT_TRUE(r >= 0 && r < n && c >= 0 && c < n)
        << "GROUP " << GROUP << " N " << n << " t " << t;
    ++seen[static_cast<std::size_t>(r / 128) * g.tiles_x + c / 64];
  }
  for (std::size_t i = 0; i < seen.size(); ++i)
    ASSERT_EQ(seen[i], 1) << "GROUP " << GROUP << " N " << n << " tile " << i;
}
TEST(Ch12TileOrder, GroupedOrdersArePermutations) {
  for (int n : {4, 28, 36, 100, 260, 1028, 2052, 16384}) {
    expect_a_permutation<1>(n);
    expect_a_permutation<8>(n);
    expect_a_permutation<ch12::kWholeColumns>(n);
  }
  const ch12::GroupedTileGrid<128, 64, 8> g(16384);  // 128 x 256 tiles
  EXPECT_EQ(g.row0(1), 128);                          // down the column first
  EXPECT_EQ(g.col0(8), 64);                           // then the next column
  EXPECT_EQ(g.row0(8 * 256), 8 * 128);                // then the next band
  const ch12::GroupedTileGrid<128, 64, ch12::kWholeColumns> cm(16384);
  EXPECT_EQ(cm.row0(127), 127 * 128);
  EXPECT_EQ(cm.col0(128), 64);
}

TEST(Ch12Negative, SwappedCoordinatesAreCaught) {
  SKIP_UNLESS_GPU(9, 0);
  EXPECT_FALSE(run_variant("v9_swapped_coords", 100).ok());
}

// The TMA unit fills the part of a box outside the matrix with zeros (OOB_FILL_NONE), and the
// inside matches the matrix, also for boxes hanging over the bottom-right edge and boxes at
// negative coordinates.
TEST(Ch12OutOfBounds, BoxesOverTheEdgesAreZeroFilled) {
  SKIP_UNLESS_GPU(9, 0);
  const int n = 36;  // 36 x 36: not a multiple of the 32 x 32 box
  ch12::Problem p(config(n));
  tut::DeviceBuffer<float> d_box(ch12::TILE * ch12::TILE);
  const int corners[][2] = {{32, 32}, {0, 16}, {-8, -4}, {20, 0}};
  for (const auto& xy : corners) {
    const int x = xy[0], y = xy[1];
    p.poison(nullptr);
    CUDA_CHECK(cudaMemset(d_box.data(), 0xFF, d_box.bytes()));
    ch12::launch_probe_box(p.map_in, x, y, d_box.data(), p.d_error.data(), nullptr);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const std::vector<float> box = d_box.download(nullptr);
    for (int r = 0; r < ch12::TILE; ++r)
      for (int c = 0; c < ch12::TILE; ++c) {
        const int gr = y + r, gc = x + c;
        std::uint32_t got;
        std::memcpy(&got, &box[r * ch12::TILE + c], 4);
        const bool inside = gr >= 0 && gr < n && gc >= 0 && gc < n;
        const std::uint32_t want = inside ? p.h_in[static_cast<std::size_t>(gr) * n + gc] : 0u;
        ASSERT_EQ(got, want) << "box at (" << x << ", " << y << "), element (" << r << ", " << c
                             << ")";
      }
  }
}

// Host only: the rules cuTensorMapEncodeTiled enforces, as sentences.
TEST(Ch12Rules, TensorMapRules) {
  alignas(16) static float buf[64];
  EXPECT_EQ(ch12::tensor_map_violation(buf, 36, 36, 32, 32, CU_TENSOR_MAP_SWIZZLE_128B), "");
  EXPECT_NE(ch12::tensor_map_violation(buf, 34, 36, 32, 32, CU_TENSOR_MAP_SWIZZLE_NONE)
                .find("multiple of 16"),
            std::string::npos);  // 136-byte row pitch
  EXPECT_NE(ch12::tensor_map_violation(buf + 1, 36, 36, 32, 32, CU_TENSOR_MAP_SWIZZLE_NONE)
                .find("aligned"),
            std::string::npos);
  EXPECT_NE(ch12::tensor_map_violation(buf, 36, 36, 512, 32, CU_TENSOR_MAP_SWIZZLE_NONE)
                .find("1..256"),
            std::string::npos);
  EXPECT_NE(ch12::tensor_map_violation(buf, 64, 64, 64, 32, CU_TENSOR_MAP_SWIZZLE_128B)
                .find("swizzle span"),
            std::string::npos);  // 256-byte box rows cannot use a 128-byte swizzle
  EXPECT_NE(ch12::tensor_map_violation(buf, 64, 64, 6, 32, CU_TENSOR_MAP_SWIZZLE_NONE)
                .find("inner extent"),
            std::string::npos);  // 24-byte box rows
}

}  // namespace
