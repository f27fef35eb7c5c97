#include "tpusim/ops/collectives.h"

#include <algorithm>

namespace tpusim::ops {

struct Collectives::Meeting {
  size_t expected = 0;
  std::map<ProcessId, std::vector<Tensor>> values;
  size_t readers_left = 0;
};

namespace {

std::string IdList(const std::vector<ProcessId>& ids) {
  std::string s = "[";
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(ids[i]);
  }
  return s + "]";
}

}  // namespace

Collectives::Collectives(int64_t num_replicas, int64_t num_partitions)
    : num_replicas_(num_replicas), num_partitions_(num_partitions) {}

template <typename Ready>
Status Collectives::Wait(std::unique_lock<std::mutex>& lock, ProcessId self,
                         const std::string& what, Ready ready) {
  // Whoever makes a waiter ready removes it from waiting_, so waiting_ holds
  // exactly the processes that cannot go on; a waiter that wakes to find its
  // condition taken by another registers again.
  while (true) {
    if (ready()) {
      waiting_.erase(self);
      return Status::Ok();
    }
    if (!error_.ok()) {
      waiting_.erase(self);
      return error_;
    }
    if (!waiting_.count(self)) {
      waiting_[self] = what;
      CheckDeadlockLocked();
      continue;
    }
    cv_.wait(lock);
  }
}

void Collectives::CheckDeadlockLocked() {
  // With a link, waiting on another host is normal and its state unknown.
  if (!error_.ok() || waiting_.empty() || link_ != nullptr) return;
  if (static_cast<int64_t>(waiting_.size()) + finished_ < num_processes()) return;
  std::string msg = "deadlock between processes:";
  for (const auto& [id, what] : waiting_) {
    msg += " (" + std::to_string(id / num_partitions_) + ", " +
           std::to_string(id % num_partitions_) + ") waits for " + what + ";";
  }
  msg += " " + std::to_string(finished_) + " finished";
  error_ = InvalidArgument(msg);
  cv_.notify_all();
}

void Collectives::Attach(GridLink* link) { link_ = link; }

std::shared_ptr<Collectives::Meeting> Collectives::MeetingLocked(
    const std::string& key, const std::vector<ProcessId>& group) {
  std::shared_ptr<Meeting>& slot = meetings_[key];
  if (!slot) {
    slot = std::make_shared<Meeting>();
    slot->expected = group.size();
    // Only this host's members read the values; the rest read their own copy.
    slot->readers_left = link_ == nullptr
                             ? group.size()
                             : std::count_if(group.begin(), group.end(), [&](ProcessId p) {
                                 return link_->HostOf(p) == link_->self_host();
                               });
  }
  return slot;
}

void Collectives::MaybeCompleteLocked(Meeting& m, const std::vector<ProcessId>& group) {
  if (m.values.size() != m.expected) return;
  for (ProcessId p : group) waiting_.erase(p);
  cv_.notify_all();
}

StatusOr<std::vector<std::vector<Tensor>>> Collectives::Exchange(
    const std::vector<ProcessId>& group, ProcessId self, const std::string& key,
    std::vector<Tensor> values) {
  std::unique_lock<std::mutex> lock(mu_);
  const std::string group_key = key + " " + IdList(group);
  int64_t use = uses_[std::to_string(self) + " " + group_key]++;
  const std::string meeting_key = group_key + " #" + std::to_string(use);
  if (link_ != nullptr) {
    // Posting may block until the peer host takes the values, and its
    // receiver needs mu_ to deliver them.
    lock.unlock();
    std::vector<int> hosts;
    for (ProcessId p : group) {
      int h = link_->HostOf(p);
      if (h == link_->self_host() || std::count(hosts.begin(), hosts.end(), h)) continue;
      hosts.push_back(h);
      Status posted = link_->Post(h, meeting_key, group, self, values);
      if (!posted.ok()) {
        Abort(posted);
        return posted;
      }
    }
    lock.lock();
  }
  std::shared_ptr<Meeting> m = MeetingLocked(meeting_key, group);
  m->values[self] = std::move(values);
  MaybeCompleteLocked(*m, group);
  TPUSIM_RETURN_IF_ERROR(Wait(lock, self, key + " with processes " + IdList(group),
                              [&] { return m->values.size() == m->expected; }));
  std::vector<std::vector<Tensor>> out;
  out.reserve(group.size());
  for (ProcessId p : group) out.push_back(m->values.at(p));
  if (--m->readers_left == 0) meetings_.erase(meeting_key);
  return out;
}

void Collectives::Deliver(const std::string& meeting, const std::vector<ProcessId>& group,
                          ProcessId from, std::vector<Tensor> values) {
  std::lock_guard<std::mutex> lock(mu_);
  std::shared_ptr<Meeting> m = MeetingLocked(meeting, group);
  m->values[from] = std::move(values);
  MaybeCompleteLocked(*m, group);
}

Status Collectives::Send(int64_t channel, ProcessId to, std::vector<Tensor> values) {
  if (link_ != nullptr && to == kAnyProcess) {
    return Unimplemented("send/recv on channel " + std::to_string(channel) +
                         " without source_target_pairs in a grid spread over several processes "
                         "(mpirun); run it in one");
  }
  if (link_ != nullptr && link_->HostOf(to) != link_->self_host()) {
    return link_->PostChannel(link_->HostOf(to), channel, to, values);
  }
  DeliverChannel(channel, to, std::move(values));
  return Status::Ok();
}

void Collectives::DeliverChannel(int64_t channel, ProcessId to, std::vector<Tensor> values) {
  std::lock_guard<std::mutex> lock(mu_);
  channels_[{channel, to}].push_back(std::move(values));
  // The receiver it wakes no longer waits (for deadlock detection).
  const std::string tag = "recv on channel " + std::to_string(channel);
  for (auto it = waiting_.begin(); it != waiting_.end(); ++it) {
    if (it->second == tag && (to == kAnyProcess || it->first == to)) {
      waiting_.erase(it);
      break;
    }
  }
  cv_.notify_all();
}

StatusOr<std::vector<Tensor>> Collectives::Recv(int64_t channel, ProcessId self, bool any) {
  if (link_ != nullptr && any) {
    return Unimplemented("recv on channel " + std::to_string(channel) +
                         " without source_target_pairs in a grid spread over several processes "
                         "(mpirun); run it in one");
  }
  std::unique_lock<std::mutex> lock(mu_);
  std::deque<std::vector<Tensor>>& queue = channels_[{channel, any ? kAnyProcess : self}];
  TPUSIM_RETURN_IF_ERROR(Wait(lock, self, "recv on channel " + std::to_string(channel),
                              [&] { return !queue.empty(); }));
  std::vector<Tensor> values = std::move(queue.front());
  queue.pop_front();
  return values;
}

void Collectives::PushInfeed(std::vector<Tensor> values) {
  std::lock_guard<std::mutex> lock(mu_);
  infeed_.push_back(std::move(values));
}

StatusOr<std::vector<Tensor>> Collectives::PopInfeed() {
  std::lock_guard<std::mutex> lock(mu_);
  if (infeed_.empty()) return OutOfRange("the infeed is empty");
  std::vector<Tensor> values = std::move(infeed_.front());
  infeed_.pop_front();
  return values;
}

void Collectives::PushOutfeed(std::vector<Tensor> values) {
  std::lock_guard<std::mutex> lock(mu_);
  outfeed_.push_back(std::move(values));
}

std::vector<std::vector<Tensor>> Collectives::TakeOutfeed() {
  std::lock_guard<std::mutex> lock(mu_);
  return std::move(outfeed_);
}

void Collectives::Finish(ProcessId self) {
  std::lock_guard<std::mutex> lock(mu_);
  ++finished_;
  CheckDeadlockLocked();
}

void Collectives::Abort(const Status& status, bool from_remote) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!error_.ok()) return;
    error_ = status;
    cv_.notify_all();
  }
  if (link_ != nullptr && !from_remote) link_->PostAbort(status);
}

Status Collectives::FirstError() {
  std::lock_guard<std::mutex> lock(mu_);
  return error_;
}

}  // namespace tpusim::ops
