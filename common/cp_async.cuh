/// @file cp_async.cuh
/// @brief The Ampere asynchronous copy (`cp.async`) as one spelling for every chapter after 06.
///
/// Chapter 06 spells these instructions out in full, one asm statement at a time, and explains
/// them; later chapters (the cp.async baselines of chapters 11 and 15, the GEMM of chapter 16)
/// call these wrappers instead of writing the inline PTX again. Each wrapper is exactly one PTX
/// instruction:
///   - cp_async_cg16()          cp.async.cg.shared.global [s], [g], 16, src_bytes  (LDGSTS.E.BYPASS.128)
///   - cp_async_ca<BYTES>()     cp.async.ca.shared.global [s], [g], BYTES, src_bytes (LDGSTS.E[.64|.128])
///   - cp_async_commit_group()  cp.async.commit_group                               (LDGDEPBAR)
///   - cp_async_wait_group<N>() cp.async.wait_group N                               (DEPBAR.LE SB0, N)
///   - cp_async_wait_all()      cp.async.wait_all
/// The copies are per thread: a thread's wait covers only the groups that thread committed, so a
/// block that reads what other threads copied needs a __syncthreads() after the wait.
///
/// The source operand: chapter 06 converts it with __cvta_generic_to_global() before the asm,
/// as the PTX ISA's `.global` operand asks. These wrappers pass the generic pointer as it is
/// (`"l"(g_src)`), as the toolkit's own cuda_pipeline_helpers.h does for
/// __pipeline_memcpy_async. Both rely on a global address and its generic address being the
/// same number, which holds on the GPUs this tutorial runs on; code that must not rely on it
/// converts first, as chapter 06 does.
#pragma once

#include <cstdint>

namespace tut {

/// @brief The 32-bit shared-window address that PTX shared-memory operands take.
__device__ __forceinline__ std::uint32_t smem_addr(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

/// @brief One 16-byte `cp.async.cg` (L2 only, bypassing L1): global -> shared.
/// @param s_dst     shared-memory destination, 16-byte aligned
/// @param g_src     global source, 16-byte aligned
/// @param src_bytes bytes read from @p g_src (0..16); the rest of the 16 are zero-filled, so
///                  a ragged tail is copied without reading past the end of the buffer
/// @note The copy has landed only after a cp_async_wait_group() that covers its commit group.
__device__ __forceinline__ void cp_async_cg16(void* s_dst, const void* g_src, int src_bytes = 16) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(s_dst)),
               "l"(g_src), "r"(src_bytes)
               : "memory");
}

/// @brief One `cp.async.ca` (through L1) of @p BYTES = 4, 8 or 16 bytes: global -> shared.
/// @tparam BYTES    copy width: 4, 8 or 16 (`.cg` exists only for 16)
/// @param s_dst     shared-memory destination, aligned to @p BYTES
/// @param g_src     global source, aligned to @p BYTES
/// @param src_bytes bytes read (0..BYTES); the rest is zero-filled
template <int BYTES>
__device__ __forceinline__ void cp_async_ca(void* s_dst, const void* g_src, int src_bytes = BYTES) {
  static_assert(BYTES == 4 || BYTES == 8 || BYTES == 16, "cp.async.ca copies 4, 8 or 16 bytes");
  asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(smem_addr(s_dst)),
               "l"(g_src), "n"(BYTES), "r"(src_bytes)
               : "memory");
}

/// @brief `cp.async.commit_group`: close this thread's current group of cp.async copies.
/// @note Commit even when the thread issued no copy this step: wait_group counts groups, so a
///       skipped commit shifts which tile "all but the N newest" refers to.
__device__ __forceinline__ void cp_async_commit_group() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}

/// @brief `cp.async.wait_group N`: block this thread until at most its @p N newest groups are
///        still in flight (every older group has landed in shared memory).
template <int N>
__device__ __forceinline__ void cp_async_wait_group() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

/// @brief `cp.async.wait_all`: commit and wait for every copy this thread issued.
__device__ __forceinline__ void cp_async_wait_all() {
  asm volatile("cp.async.wait_all;\n" ::: "memory");
}

}  // namespace tut
