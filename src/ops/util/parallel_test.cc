#include "ops/util/parallel.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <utility>
#include <vector>

namespace tpusim::ops {
namespace {

// The ranges one ParallelFor hands out, sorted.
std::vector<std::pair<int64_t, int64_t>> Ranges(int64_t n, int64_t grain, int64_t align) {
  std::mutex mu;
  std::vector<std::pair<int64_t, int64_t>> ranges;
  ParallelFor(
      n, grain,
      [&](int64_t b, int64_t e) {
        std::lock_guard<std::mutex> lock(mu);
        ranges.emplace_back(b, e);
      },
      align);
  std::sort(ranges.begin(), ranges.end());
  return ranges;
}

TEST(ParallelForTest, CoversTheRangeOnceInAlignedChunks) {
  for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{7}, int64_t{1000}, int64_t{1} << 17,
                    (int64_t{1} << 17) + 13}) {
    for (int64_t align : {1, 512}) {
      auto ranges = Ranges(n, 1000, align);
      int64_t next = 0;
      for (size_t i = 0; i < ranges.size(); ++i) {
        EXPECT_EQ(ranges[i].first, next) << n;
        EXPECT_LT(ranges[i].first, ranges[i].second) << n;
        if (i + 1 < ranges.size()) {
          EXPECT_EQ(ranges[i].second % align, 0) << n;
        }
        next = ranges[i].second;
      }
      EXPECT_EQ(next, n);
    }
  }
}

TEST(ParallelForTest, SmallRangesAndSerialOpsRunInline) {
  EXPECT_EQ(ParallelThreads(100, 1000), 1);
  EXPECT_EQ(Ranges(1999, 1000, 1).size(), 1u);
  SerialOps serial;
  EXPECT_EQ(ParallelThreads(int64_t{1} << 30, 1), 1);
  EXPECT_EQ(Ranges(int64_t{1} << 20, 1, 1).size(), 1u);
}

TEST(ParallelForTest, DoesNotNest) {
  std::atomic<int> inner_threads{0};
  ParallelFor(int64_t{1} << 20, 1,
              [&](int64_t, int64_t) { inner_threads += ParallelThreads(int64_t{1} << 20, 1); });
  // Every chunk of the outer loop saw one thread for an inner loop.
  EXPECT_EQ(inner_threads.load(), ParallelThreads(int64_t{1} << 20, 1));
}

TEST(ParallelTasksTest, RunsEveryTaskOnceOneAtATime) {
  for (int64_t n : {0, 1, 2, 37}) {
    std::vector<std::atomic<int>> runs(static_cast<size_t>(n));
    std::atomic<int> wide{0};
    ParallelTasks(n, [&](int64_t b, int64_t e) {
      if (e != b + 1) ++wide;
      ++runs[static_cast<size_t>(b)];
    });
    EXPECT_EQ(wide.load(), 0) << n;
    for (int64_t i = 0; i < n; ++i) EXPECT_EQ(runs[static_cast<size_t>(i)].load(), 1) << n;
  }
}

TEST(ParallelTasksTest, AFreeThreadTakesTheNextTask) {
  if (ParallelThreads(4, 1) < 2) GTEST_SKIP() << "one thread";
  // Task 0 waits for task 1. Handed out in fixed halves, both would be the
  // first thread's, and task 1 would start only after task 0 gave up.
  std::atomic<bool> second_done{false};
  bool waited_in_vain = false;
  ParallelTasks(4, [&](int64_t i, int64_t) {
    if (i == 0) {
      auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (!second_done.load() && std::chrono::steady_clock::now() < give_up) {
      }
      waited_in_vain = !second_done.load();
    }
    if (i == 1) second_done = true;
  });
  EXPECT_FALSE(waited_in_vain);
}

}  // namespace
}  // namespace tpusim::ops
