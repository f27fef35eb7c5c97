#include "runtime/progress_line.h"

#include <chrono>
#include <string>

#include "tpusim/base/text.h"

namespace tpusim::runtime {

ProgressLine::ProgressLine(const exec::Progress* progress, std::FILE* out, double delay_s,
                           double period_s)
    : progress_(progress), out_(out) {
  if (progress_ == nullptr || out_ == nullptr) return;
  thread_ = std::thread([this, delay_s, period_s] {
    using Clock = std::chrono::steady_clock;
    const Clock::time_point start = Clock::now();
    std::chrono::duration<double> wait(delay_s);
    std::unique_lock lock(mu_);
    while (!done_cv_.wait_for(lock, wait, [this] { return done_; })) {
      Draw(std::chrono::duration<double>(Clock::now() - start).count());
      wait = std::chrono::duration<double>(period_s);
    }
  });
}

ProgressLine::~ProgressLine() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(mu_);
    done_ = true;
  }
  done_cv_.notify_one();
  thread_.join();
  if (drawn_) {
    std::fputs("\r\033[K", out_);
    std::fflush(out_);
  }
}

void ProgressLine::Draw(double elapsed_s) {
  std::string line = "computing values: " + std::to_string(static_cast<int64_t>(elapsed_s)) +
                     " s, " + CountOf(progress_->ops.load(std::memory_order_relaxed), "op");
  if (const ir::Operation* loop = progress_->loop.load(std::memory_order_relaxed)) {
    line += ", iteration " +
            std::to_string(progress_->iteration.load(std::memory_order_relaxed) + 1) +
            " of the " + loop->name_str() + " at " + loop->loc().ToString();
  }
  line += " (Ctrl-C stops with the report so far)";
  std::fprintf(out_, "\r\033[K%s", line.c_str());
  std::fflush(out_);
  drawn_ = true;
}

}  // namespace tpusim::runtime
