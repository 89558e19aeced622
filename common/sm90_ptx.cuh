/// @file sm90_ptx.cuh
/// @brief The Hopper instructions that `cuda::ptx` (CCCL 3.0) does not provide, one thin
///        wrapper each: wgmma (fence, the m64n256k16 and m64n128k16 MMAs, commit, wait) and
///        its shared-memory matrix descriptor, setmaxnreg, elect.sync, a named barrier, the remote mbarrier
///        arrive with the default (release, CTA-scope) semantics, the 16-byte load from a
///        cluster peer's shared memory, the tensor-map prefetch, and the tensor-map load with an L2
///        cache policy.
///
/// Everything CCCL does provide (mbarrier init/arrive/wait, cp.async.bulk and the tensor-map
/// copies, the proxy and mbarrier-init fences, the cluster barrier and special registers) the
/// chapters spell through `cuda::ptx`; this header holds only the rest, so there is one
/// spelling per instruction.
///
/// Targets. `wgmma` exists only in the architecture-specific target sm_90a: ptxas rejects it
/// for plain sm_90 and for sm_100a. `setmaxnreg` is architecture-specific too, but not
/// sm_90a-only: ptxas 13.0 accepts it for sm_90a, sm_100a, sm_100f and sm_120a, and rejects it
/// for plain sm_90. Both are therefore compiled only where `__CUDA_ARCH_FEAT_SM90_ALL` is
/// defined (the sm_90a pass); the generic compute_90 PTX listing simply lacks them.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "cp_async.cuh"  // tut::smem_addr

namespace tut {

// ---------------------------------------------------------------------------------------------
// wgmma: the shared-memory matrix descriptor, the fence, the MMA, commit and wait
// ---------------------------------------------------------------------------------------------

/// @brief The 64-bit descriptor wgmma reads an operand tile through (PTX ISA, "Matrix
///        Descriptor Format"), for a tile as TMA writes it with CU_TENSOR_MAP_SWIZZLE_128B: rows
///        of 64 bf16 (128 bytes, the K extent of one stage), row r at byte 128 * r, and inside
///        each group of 8 rows (1024 bytes) the eight 16-byte chunks of row r permuted by
///        chunk ^ (r % 8).
///
///     bits  0-13  start address / 16         where this operand begins
///     bits 16-29  leading byte offset / 16   between core matrices along K; unused for a
///                                            K-major swizzled operand (a K16 slice lies inside
///                                            one 128-byte row), conventionally 1
///     bits 32-45  stride byte offset / 16    between 8-row groups: 8 x 128 B = 1024 B
///     bits 62-63  swizzle mode               1 = 128-byte swizzle (0 none, 2 64 B, 3 32 B)
///
/// The tile must start on a 1024-byte boundary (base offset field 0). K16 slice k (0..3) of a
/// stage adds k * 32 bytes to the start address (+2 in units of 16 bytes): the hardware applies
/// the XOR to the address it computes, so the slice is found inside the swizzled rows.
__device__ __forceinline__ std::uint64_t smem_desc_sw128(const void* tile) {
  const std::uint32_t addr = smem_addr(tile);
  std::uint64_t desc = (addr & 0x3FFFFu) >> 4;
  desc |= std::uint64_t{1} << 16;          // leading byte offset (ignored here)
  desc |= std::uint64_t{1024 >> 4} << 32;  // stride byte offset: one 8-row group
  desc |= std::uint64_t{1} << 62;          // 128-byte swizzle
  return desc;
}

/// @brief `wgmma.fence`: orders this warpgroup's earlier register and shared-memory accesses
///        before the wgmma.mma_async that follow (required before the first MMA of a batch,
///        and whenever the accumulators were touched by ordinary instructions).
__device__ __forceinline__ void wgmma_fence() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#endif
}

/// @brief `wgmma.commit_group`: close the batch of MMAs issued since the last commit.
__device__ __forceinline__ void wgmma_commit_group() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#endif
}

/// @brief `wgmma.wait_group N`: wait until at most N committed batches of this warpgroup are
///        still running. Only then may the shared memory the finished batches read be
///        overwritten, or their accumulators be read. `.sync.aligned`: the whole warpgroup
///        executes it together, so after it every lane of every warp knows the reads are over.
template <int N>
__device__ __forceinline__ void wgmma_wait_group() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
#endif
}

/// @brief Pins the accumulators (128 of m64n256k16, 64 of m64n128k16) at this point of the
///        program: the compiler may not move their reads (the epilogue) above a
///        wgmma_wait_group, which it cannot see is about them.
template <int N>
__device__ __forceinline__ void fence_accumulators(float (&d)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

/// @brief One warpgroup MMA, D[64 x 256] (+)= A[64 x 16] * B[256 x 16]^T, bf16 in, fp32
///        accumulate, both operands K-major in shared memory (transpose flags 0).
///        @p accumulate 0 overwrites D (the first K slice of a tile: no zeroing of 128
///        registers needed). Thread t of the warpgroup holds d[j] = D[row][col] with
///        row = 16 * (t / 32) + (t % 32) / 4 + 8 * ((j / 2) % 2) and
///        col = 8 * (j / 4) + 2 * (t % 4) + j % 2.
__device__ __forceinline__ void wgmma_m64n256k16(float (&d)[128], std::uint64_t desc_a,
                                                 std::uint64_t desc_b, int accumulate) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
      "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
      "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
      "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
      "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
      "}, %128, %129, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
        "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
        "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
        "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
        "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
        "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
        "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
        "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
        "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "l"(desc_a), "l"(desc_b), "r"(accumulate)
      : "memory");
#else
  (void)d, (void)desc_a, (void)desc_b, (void)accumulate;
#endif
}

/// @brief The same MMA with half the width, D[64 x 128] (+)= A[64 x 16] * B[128 x 16]^T: 64
///        accumulators per thread, in the same fragment layout (j < 64, col < 128).
__device__ __forceinline__ void wgmma_m64n128k16(float (&d)[64], std::uint64_t desc_a,
                                                 std::uint64_t desc_b, bool accumulate) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\nwgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {"
               "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
               "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
               "}, %64, %65, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "l"(desc_a), "l"(desc_b), "r"(static_cast<int>(accumulate))
      : "memory");
#else
  (void)d, (void)desc_a, (void)desc_b, (void)accumulate;
#endif
}

// ---------------------------------------------------------------------------------------------
// setmaxnreg: moving registers between the warpgroups of a block at run time
// ---------------------------------------------------------------------------------------------

/// @brief The register budget of a warp-specialised block, checked at compile time.
///
/// PTX ISA, `setmaxnreg`: the CTA keeps a pool of registers; `setmaxnreg.dec` releases the
/// registers a warp no longer needs into it, and `setmaxnreg.inc` BLOCKS until the pool holds
/// the registers it asks for. The pool starts as the launch allocation: block threads x the
/// registers per thread the kernel was compiled for (its launch bound). It never grows beyond
/// that. So, with every thread starting at @p kLaunchRegs registers, a block whose
/// @p kProducerThreads threads drop to @p kProducerRegs and whose @p kConsumerThreads threads
/// rise to @p kConsumerRegs can make progress only if
///
///     kProducerThreads * kProducerRegs + kConsumerThreads * kConsumerRegs
///         <= (kProducerThreads + kConsumerThreads) * kLaunchRegs
///
/// An inc above that waits forever: no error, no timeout, a hung GPU. The static_assert turns
/// that hang into a compile error. The register counts must also be multiples of 8 in
/// [24, 256] (the instruction's own rule).
template <int kProducerThreads, int kProducerRegs, int kConsumerThreads, int kConsumerRegs,
          int kLaunchRegs>
struct RegisterBudget {
  static_assert(kProducerRegs % 8 == 0 && kConsumerRegs % 8 == 0,
                "setmaxnreg takes a multiple of 8 registers");
  static_assert(kProducerRegs >= 24 && kConsumerRegs <= 256,
                "setmaxnreg takes 24..256 registers per thread");
  static_assert(kProducerRegs <= kLaunchRegs && kConsumerRegs >= kLaunchRegs,
                "the producer decreases, the consumers increase");
  static_assert(kProducerThreads * kProducerRegs + kConsumerThreads * kConsumerRegs <=
                    (kProducerThreads + kConsumerThreads) * kLaunchRegs,
                "setmaxnreg.inc would wait forever: the consumers ask for more registers than "
                "the producer's setmaxnreg.dec gives back to the block's pool (threads x the "
                "registers per thread of the launch allocation)");
  static constexpr bool ok = true;
};

/// @brief `setmaxnreg.dec`: the whole warpgroup gives registers back to the block's pool, so a
///        producer that needs few leaves them to consumers that need many.
template <int REGS>
__device__ __forceinline__ void setmaxnreg_dec() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(REGS));
#endif
}
/// @brief `setmaxnreg.inc`: the whole warpgroup claims registers from the pool; blocks until
///        the pool has them (see RegisterBudget).
template <int REGS>
__device__ __forceinline__ void setmaxnreg_inc() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(REGS));
#endif
}

// ---------------------------------------------------------------------------------------------
// elect.sync, named barriers, the default-semantics remote arrive
// ---------------------------------------------------------------------------------------------

/// @brief `elect.sync`: true in exactly one active lane of the warp (the same lane for the
///        whole warp), without the compiler having to prove which lane is alive.
__device__ __forceinline__ bool elect_one_lane() {
  std::uint32_t elected = 0;
  asm volatile(
      "{\n.reg .pred p;\nelect.sync _|p, 0xffffffff;\nselp.u32 %0, 1, 0, p;\n}\n"
      : "=r"(elected));
  return elected != 0;
}

/// @brief `bar.sync id, threads`: a named barrier among @p threads threads (a warpgroup),
///        id 1..15 (0 is __syncthreads).
__device__ __forceinline__ void named_barrier_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

/// @brief An arrival on the mbarrier at the same offset in the shared memory of cluster block
///        @p rank (mapa turns the local address into that block's shared::cluster address),
///        with the default semantics (release at CTA scope), as CUTLASS's ClusterBarrier uses.
///        `cuda::ptx::mbarrier_arrive` offers the shared::cluster form only as
///        `.release.cluster`, which costs a MEMBAR before every arrival (seen in the SASS of
///        chapter 16). The default form suffices where the reads it orders are already
///        complete when the arrive executes (after `wgmma.wait_group`).
__device__ __forceinline__ void mbarrier_arrive_remote(std::uint64_t* bar, unsigned rank) {
  asm volatile(
      "{\n.reg .b32 remote;\nmapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n" ::"r"(smem_addr(bar)),
      "r"(rank)
      : "memory");
}

/// @brief `prefetch.tensormap`: bring the 128-byte tensor map at generic address @p map (a
///        `__grid_constant__` kernel parameter) into the TMA unit's descriptor cache ahead of
///        the first `cp.async.bulk.tensor` that names it, so that copy does not also wait for
///        the descriptor's fetch. A hint only: it changes no result. `cuda::ptx` (CCCL 3.0)
///        has the tensor-map replace and fence instructions, not this prefetch. PTX ISA 8.0,
///        sm_90 and later (compiled away for older targets).
__device__ __forceinline__ void prefetch_tensormap(const void* map) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<std::uint64_t>(map)) : "memory");
#endif
}

/// @brief `createpolicy.fractional.L2::evict_last`: a 64-bit L2 cache policy that asks L2 to
///        keep the lines it covers (all of them: fraction 1.0) in preference to others, for
///        data that will be read again soon. A hint: it changes no result.
__device__ __forceinline__ std::uint64_t l2_policy_evict_last() {
  std::uint64_t policy = 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;\n" : "=l"(policy));
#endif
  return policy;
}

/// @brief The 2-D tensor-map load into this block's shared memory (as
///        `cuda::ptx::cp_async_bulk_tensor`), with an L2 cache policy
///        (`.L2::cache_hint`, e.g. from l2_policy_evict_last) for the lines it reads:
///        CCCL 3.0's `cp_async_bulk_tensor` has no cache-hint form. The box at (@p c0, @p c1)
///        of @p map lands at @p dst and completes its bytes on @p bar.
__device__ __forceinline__ void tma_load_2d_l2_hint(void* dst, const void* map, std::uint64_t* bar,
                                                    int c0, int c1, std::uint64_t policy) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint"
      " [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(smem_addr(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(c0), "r"(c1), "r"(smem_addr(bar)), "l"(policy)
      : "memory");
#else
  __trap();  // tensor-map copies need sm_90
#endif
}

/// @brief `ld.shared::cluster.v4.f32`: 16 bytes from the shared memory of another block of the
///        cluster. @p remote is the generic address `__cluster_map_shared_rank` returned for
///        it; converted to its shared::cluster address (as `cuda::ptx` does for its remote
///        mbarrier forms), the load goes over the SM-to-SM network, not through L2. `cuda::ptx`
///        (CCCL 3.0) has `ld` only for the global space.
__device__ __forceinline__ float4 ld_shared_cluster_v4(const float4* remote) {
  float4 v;
  asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];\n"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
               : "r"(static_cast<std::uint32_t>(__cvta_generic_to_shared(remote)))
               : "memory");
  return v;
}

}  // namespace tut
