/// @file compile_fail.cu
/// @brief Chapter 16's compile-fail test of step 3's setmaxnreg register budget
///        (tut::RegisterBudget, common/sm90_ptx.cuh): a budget the launch cannot honour must
///        not compile.
///
/// `setmaxnreg.inc` blocks until the block's register pool holds what it asks for, and the pool
/// is the launch allocation (threads x registers per thread of the launch bound), so a budget
/// that asks for more than the producer's dec frees would hang the GPU. It must fail to compile.
/// - `-DCONTROL`: step 3's own budget (128 x 40 + 256 x 232 <= 384 x 168): must compile;
/// - default: a producer that keeps 48 registers (128 x 48 + 256 x 232 = 65,536 > 64,512, yet
///   <= 64 K, so a check against the register file's size alone would accept it): must be
///   rejected.
///
/// CTest ch16_tensor_core_gemm_register_budget (label inspect) passes only when both hold.
#include "step3_warp_specialized.cuh"

namespace {
#ifdef CONTROL
constexpr int kProducerRegs = ch16::step3::PRODUCER_REGS;
#else
constexpr int kProducerRegs = ch16::step3::PRODUCER_REGS + 8;
#endif
static_assert(tut::RegisterBudget<128, kProducerRegs, 256, ch16::step3::CONSUMER_REGS,
                                  ch16::step3::LAUNCH_REGS>::ok,
              "the register budget");
}  // namespace
