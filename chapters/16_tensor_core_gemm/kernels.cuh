/// @file kernels.cuh
/// @brief Chapter 16: Hopper tensor cores fed by TMA - a BF16 GEMM (fp32 accumulation, bf16
///        output) where every asynchronous technique of the tutorial pays, one idea per step,
///        against cuBLAS. This file is the index: one file per step, in reading order.
///
///     C[M x N] = A[M x K] * B[N x K]^T   (row-major A, B stored N x K: both operands K-major,
///                                          cuBLAS "TN", the layout wgmma reads untransposed)
///
///     step 1  mma.sync fed by a 4-stage cp.async ring                  step1_mma_sync.cuh
///     step 2  wgmma from shared memory, TMA with 128-byte swizzle,
///             one warpgroup                                            step2_wgmma_tma.cuh
///     step 3  warp specialization: a producer warp, two consumer
///             warpgroups, full/empty mbarriers, setmaxnreg             step3_warp_specialized.cuh
///     step 4  2-block cluster: B multicast, remote "slot free" arrivals step4_cluster.cuh
///     step 5  persistent, L2-grouped tile order, TMA-store epilogue    step5_persistent.cuh
///     step 6  step 5's kernel with levers: a 16 KiB staging stored box
///             by box, a fourth ring stage, one slot release per
///             warpgroup and block (each lever a row, then all three)   step6_levers.cuh
///     step 7  small problems: 128 x 128 tiles, split-K over a 2-block
///             cluster reduced through DSMEM (remote loads, then one
///             bulk DSMEM copy per partial, then + TMA stores), a
///             size-dispatched choice                                   step7_small_tiles.cuh
///     step 8  step 6i with the last, partial round of tile pairs split
///             by k-tiles over every cluster (stream-K), partial sums
///             handed to each tile's owner through global memory        step8_stream_k.cuh
///
/// Each step file holds its constants, its kernel and its launcher in a namespace named after
/// the step (ch16::step1 ... ch16::step8). What they share is in gemm_common.cuh; the Hopper
/// instructions that cuda::ptx lacks (wgmma, its descriptor, setmaxnreg, elect.sync) in
/// common/sm90_ptx.cuh. The negatives (each must FAIL) are in broken.cuh; the host side
/// (problem, references, cuBLAS, variants) in main.cu.
///
/// Minimum: sm_90a (compute capability 9.0 exactly): wgmma exists only in the sm_90a target.
#pragma once

#include "gemm_common.cuh"
#include "step1_mma_sync.cuh"
#include "step2_wgmma_tma.cuh"
#include "step3_warp_specialized.cuh"
#include "step4_cluster.cuh"
#include "step5_persistent.cuh"
#include "step6_levers.cuh"
#include "step7_small_tiles.cuh"
#include "step8_stream_k.cuh"
