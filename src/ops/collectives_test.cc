#include "tpusim/ops/collectives.h"

#include <gtest/gtest.h>

#include <thread>

namespace tpusim::ops {
namespace {

Tensor Scalar(int32_t v) {
  Tensor t = Tensor::Allocate(ir::Type::Tensor(ir::ElementType::kSI32, {})).value();
  t.mutable_data<int32_t>()[0] = v;
  return t;
}

// Runs body(process) on one thread per process of `grid`, marking each
// finished afterwards as run_parallel does.
template <typename Body>
void RunGrid(Collectives& grid, Body body) {
  std::vector<std::thread> threads;
  for (ProcessId p = 0; p < grid.num_processes(); ++p) {
    threads.emplace_back([&, p] {
      body(p);
      grid.Finish(p);
    });
  }
  for (auto& t : threads) t.join();
}

TEST(Collectives, ExchangeReturnsValuesInGroupOrder) {
  Collectives grid(2, 2);
  std::vector<std::vector<int32_t>> seen(4);
  RunGrid(grid, [&](ProcessId p) {
    // Two groups, each listed out of id order; two rounds each.
    std::vector<ProcessId> group =
        p % 2 == 0 ? std::vector<ProcessId>{2, 0} : std::vector<ProcessId>{3, 1};
    for (int round = 0; round < 2; ++round) {
      auto all = grid.Exchange(group, p, "op", {Scalar(static_cast<int32_t>(10 * round + p))});
      ASSERT_TRUE(all.ok()) << all.status().ToString();
      for (const auto& v : *all) seen[p].push_back(v[0].data<int32_t>()[0]);
    }
  });
  EXPECT_EQ(seen[0], (std::vector<int32_t>{2, 0, 12, 10}));
  EXPECT_EQ(seen[3], (std::vector<int32_t>{3, 1, 13, 11}));
  EXPECT_TRUE(grid.FirstError().ok());
}

TEST(Collectives, SendRecvPairUpInOrder) {
  Collectives grid(2, 1);
  std::vector<int32_t> got;
  RunGrid(grid, [&](ProcessId p) {
    if (p == 0) {
      grid.Send(7, {Scalar(1)});
      grid.Send(7, {Scalar(2)});
      return;
    }
    for (int i = 0; i < 2; ++i) got.push_back(grid.Recv(7, p).value()[0].data<int32_t>()[0]);
  });
  EXPECT_EQ(got, (std::vector<int32_t>{1, 2}));
}

TEST(Collectives, DetectsAPeerThatNeverComes) {
  Collectives grid(2, 1);
  Status st0;
  RunGrid(grid, [&](ProcessId p) {
    if (p == 0) st0 = grid.Exchange({0, 1}, 0, "stablehlo.all_reduce", {Scalar(1)}).status();
  });
  ASSERT_FALSE(st0.ok());
  EXPECT_NE(st0.message().find("deadlock"), std::string::npos) << st0.message();
  EXPECT_NE(st0.message().find("stablehlo.all_reduce"), std::string::npos) << st0.message();
}

TEST(Collectives, DetectsMismatchedCollectives) {
  Collectives grid(2, 1);
  std::vector<Status> st(2);
  RunGrid(grid, [&](ProcessId p) {
    st[p] = grid.Exchange({0, 1}, p, p == 0 ? "all_reduce" : "all_gather", {Scalar(1)}).status();
  });
  EXPECT_FALSE(st[0].ok());
  EXPECT_FALSE(st[1].ok());
  EXPECT_NE(grid.FirstError().message().find("deadlock"), std::string::npos);
}

TEST(Collectives, DetectsRecvWithoutSender) {
  Collectives grid(1, 1);
  StatusOr<std::vector<Tensor>> r = grid.Recv(3, 0);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("recv on channel 3"), std::string::npos);
}

TEST(Collectives, AbortWakesWaiters) {
  Collectives grid(3, 1);
  Status waiting;
  RunGrid(grid, [&](ProcessId p) {
    if (p == 0) waiting = grid.Exchange({0, 1}, 0, "op", {Scalar(1)}).status();
    if (p == 2) grid.Abort(FailedPrecondition("process 2 failed"));
    // Process 1 never joins, but process 2's failure ends the wait first or
    // the deadlock check does once 1 and 2 finish; either way it ends.
  });
  EXPECT_FALSE(waiting.ok());
  EXPECT_EQ(grid.FirstError().code(), StatusCode::kFailedPrecondition);
}

TEST(Collectives, InfeedIsFifoAndEmptyIsAnError) {
  Collectives grid(1, 1);
  grid.PushInfeed({Scalar(1)});
  grid.PushInfeed({Scalar(2)});
  EXPECT_EQ(grid.PopInfeed().value()[0].data<int32_t>()[0], 1);
  EXPECT_EQ(grid.PopInfeed().value()[0].data<int32_t>()[0], 2);
  EXPECT_EQ(grid.PopInfeed().status().code(), StatusCode::kOutOfRange);
}

}  // namespace
}  // namespace tpusim::ops
