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
      EXPECT_TRUE(grid.Send(7, Collectives::kAnyProcess, {Scalar(1)}).ok());
      EXPECT_TRUE(grid.Send(7, Collectives::kAnyProcess, {Scalar(2)}).ok());
      return;
    }
    for (int i = 0; i < 2; ++i) got.push_back(grid.Recv(7, p, true).value()[0].data<int32_t>()[0]);
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
  StatusOr<std::vector<Tensor>> r = grid.Recv(3, 0, true);
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

// Two hosts in one address space: each link hands what it posts straight to
// the other host's Collectives, as an MPI link would over the wire.
class DirectLink : public GridLink {
 public:
  DirectLink(int self, int64_t split) : self_(self), split_(split) {}
  void Connect(Collectives* peer) { peer_ = peer; }
  int HostOf(ProcessId p) const override { return p < split_ ? 0 : 1; }
  int self_host() const override { return self_; }
  Status Post(int host, const std::string& meeting, const std::vector<ProcessId>& group,
              ProcessId from, const std::vector<Tensor>& values) override {
    EXPECT_NE(host, self_);
    ++posts;
    peer_->Deliver(meeting, group, from, values);
    return Status::Ok();
  }
  Status PostChannel(int host, int64_t channel, ProcessId to,
                     const std::vector<Tensor>& values) override {
    EXPECT_NE(host, self_);
    ++posts;
    peer_->DeliverChannel(channel, to, values);
    return Status::Ok();
  }
  void PostAbort(const Status& status) override { peer_->Abort(status, /*from_remote=*/true); }
  int posts = 0;

 private:
  int self_;
  int64_t split_;
  Collectives* peer_ = nullptr;
};

TEST(CollectivesOverHosts, ExchangeMeetsAcrossHosts) {
  Collectives host0(1, 4), host1(1, 4);
  DirectLink link0(0, 1), link1(1, 1);  // process 0 on host 0; 1-3 on host 1
  link0.Connect(&host1);
  link1.Connect(&host0);
  host0.Attach(&link0);
  host1.Attach(&link1);
  std::vector<std::vector<int32_t>> seen(4);
  std::vector<std::thread> threads;
  for (ProcessId p = 0; p < 4; ++p) {
    Collectives& mine = p == 0 ? host0 : host1;
    threads.emplace_back([&, p] {
      for (int round = 0; round < 2; ++round) {
        auto all =
            mine.Exchange({0, 1, 2, 3}, p, "k", {Scalar(static_cast<int32_t>(10 * round + p))});
        ASSERT_TRUE(all.ok()) << all.status().message();
        for (const auto& v : *all) seen[p].push_back(v[0].data<int32_t>()[0]);
      }
    });
  }
  for (auto& t : threads) t.join();
  for (ProcessId p = 0; p < 4; ++p) {
    EXPECT_EQ(seen[p], (std::vector<int32_t>{0, 1, 2, 3, 10, 11, 12, 13})) << p;
  }
  // Each process posts once per round to the one other host.
  EXPECT_EQ(link0.posts, 2);
  EXPECT_EQ(link1.posts, 6);
}

TEST(CollectivesOverHosts, AddressedSendsCrossHosts) {
  Collectives host0(1, 2), host1(1, 2);
  DirectLink link0(0, 1), link1(1, 1);  // process 0 on host 0, 1 on host 1
  link0.Connect(&host1);
  link1.Connect(&host0);
  host0.Attach(&link0);
  host1.Attach(&link1);
  std::thread receiver([&] {
    auto got = host1.Recv(4, 1, /*any=*/false);
    ASSERT_TRUE(got.ok()) << got.status().message();
    EXPECT_EQ((*got)[0].data<int32_t>()[0], 7);
  });
  ASSERT_TRUE(host0.Send(4, 1, {Scalar(7)}).ok());
  receiver.join();
  EXPECT_EQ(link0.posts, 1);
  EXPECT_EQ(host1.Recv(4, 1, /*any=*/true).status().code(), StatusCode::kUnimplemented);
}

TEST(CollectivesOverHosts, AbortReachesTheOtherHostAndSendIsRefused) {
  Collectives host0(1, 2), host1(1, 2);
  DirectLink link0(0, 1), link1(1, 1);
  link0.Connect(&host1);
  link1.Connect(&host0);
  host0.Attach(&link0);
  host1.Attach(&link1);
  EXPECT_EQ(host0.Send(3, Collectives::kAnyProcess, {Scalar(1)}).code(),
            StatusCode::kUnimplemented);
  Status waited;
  std::thread waiter([&] { waited = host1.Exchange({0, 1}, 1, "k", {Scalar(1)}).status(); });
  host0.Abort(InvalidArgument("process 0 failed"));
  waiter.join();
  EXPECT_EQ(waited.message(), "process 0 failed");
  EXPECT_EQ(host1.FirstError().message(), "process 0 failed");
}

}  // namespace
}  // namespace tpusim::ops
