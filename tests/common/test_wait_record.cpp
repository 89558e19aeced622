// The sentence a timed-out bounded wait prints (common/wait_record.hpp), without a GPU.
#include "common/wait_record.hpp"

#include <gtest/gtest.h>

#include <cstring>

namespace {

tut::WaitRecord consumer_full_record() {
  tut::WaitRecord r;
  std::memset(&r, 0, sizeof(r));
  r.block = 17;
  r.warp = 8;
  r.role = tut::WaitRole::kConsumerWarpgroup;
  r.role_index = 2;
  r.barrier = tut::Barrier::kFull;
  r.has_slot = 1;
  r.slot = 3;
  r.parity = 1;
  r.step_kind = tut::WaitStep::kKTile;
  r.step = 9;
  r.expect_tx = 49152;
  return r;
}

TEST(WaitRecord, SentenceNamesRoleBlockBarrierSlotParityIterationAndBytes) {
  EXPECT_EQ(tut::describe_timeout(consumer_full_record()),
            "consumer warpgroup 2 of block 17 (warp 8) timed out on full[3] waiting for parity 1 "
            "at k-tile 9 (expect_tx 49152 bytes)");
}

TEST(WaitRecord, LoneBarrierWithoutBytesOrIteration) {
  tut::WaitRecord r = consumer_full_record();
  r.role = tut::WaitRole::kWarp;
  r.role_index = 4;
  r.warp = 4;
  r.barrier = tut::Barrier::kTile;
  r.has_slot = 0;
  r.step_kind = tut::WaitStep::kNone;
  r.expect_tx = 0;
  r.parity = 0;
  EXPECT_EQ(tut::describe_timeout(r), "warp 4 of block 17 timed out on tile waiting for parity 0");
}

TEST(WaitRecord, PartialFlagNamesTheClusterNotAParity) {
  // Chapter 16's stream-K flag is a word in global memory, not an mbarrier: the sentence names
  // the cluster whose partial tile never arrived, and no phase parity.
  tut::WaitRecord r = consumer_full_record();
  r.barrier = tut::Barrier::kPartial;
  r.slot = 5;
  r.step_kind = tut::WaitStep::kTile;
  r.step = 61;
  r.expect_tx = 0;
  EXPECT_EQ(tut::describe_timeout(r),
            "consumer warpgroup 2 of block 17 (warp 8) timed out on partial[5], the flag of the "
            "partial tile cluster 5 writes, at tile 61");
}

TEST(WaitRecord, EachRoleBarrierAndStepHasItsWord) {
  tut::WaitRecord r = consumer_full_record();
  r.role = tut::WaitRole::kProducerWarp;
  r.role_index = 0;
  r.barrier = tut::Barrier::kEmpty;
  r.step_kind = tut::WaitStep::kTile;
  EXPECT_EQ(tut::describe_timeout(r),
            "producer warp 0 of block 17 (warp 8) timed out on empty[3] waiting for parity 1 at "
            "tile 9 (expect_tx 49152 bytes)");
  r.role = tut::WaitRole::kConsumerWarp;
  r.barrier = tut::Barrier::kConsumed;
  r.step_kind = tut::WaitStep::kStep;
  EXPECT_NE(tut::describe_timeout(r).find("consumer warp 0 "), std::string::npos);
  EXPECT_NE(tut::describe_timeout(r).find("consumed[3]"), std::string::npos);
  EXPECT_NE(tut::describe_timeout(r).find("at step 9"), std::string::npos);
}

TEST(WaitRecord, DistinctWaitsOncePerPlaceWithTheCountOfOthers) {
  tut::WaitLog log;
  std::memset(&log, 0, sizeof(log));
  log.word = 1;
  log.count = 4;
  log.records[0] = consumer_full_record();
  log.records[1] = consumer_full_record();
  log.records[1].block = 18;  // same place, another block: folded into the first sentence
  log.records[2] = consumer_full_record();
  log.records[2].block = 19;
  log.records[3] = consumer_full_record();
  log.records[3].slot = 0;    // another slot: a sentence of its own
  const std::vector<std::string> lines = tut::describe_timeouts(log);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[0].find("block 17"), std::string::npos);
  EXPECT_NE(lines[0].find("; 2 other warps timed out at the same place"), std::string::npos);
  EXPECT_NE(lines[1].find("full[0]"), std::string::npos);
  EXPECT_EQ(lines[1].find("other"), std::string::npos);
}

TEST(WaitRecord, MoreTimeoutsThanTheLogKeepsAreCounted) {
  tut::WaitLog log;
  std::memset(&log, 0, sizeof(log));
  log.word = 1;
  log.count = tut::WaitLog::kCapacity + 5;
  for (unsigned i = 0; i < tut::WaitLog::kCapacity; ++i) {
    log.records[i] = consumer_full_record();
    log.records[i].block = i;
  }
  const std::vector<std::string> lines = tut::describe_timeouts(log);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1], "5 more warps timed out (the log keeps the first 16)");
}

}  // namespace
