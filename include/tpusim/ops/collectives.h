// Collectives: how the processes of one replicas x partitions grid exchange
// data. One object is shared by every process of a grid (each process runs on
// its own thread); it provides the rendezvous behind the collective ops, the
// channels behind send/recv, and the grid's infeed and outfeed queues.
//
// Every blocking call takes part in deadlock detection: when each process of
// the grid is either finished or blocked on something no running process can
// provide, the grid is aborted and every blocked call returns an error that
// says what each process was waiting for. A process that fails aborts the
// grid too, so the others stop instead of waiting forever.
#ifndef TPUSIM_OPS_COLLECTIVES_H_
#define TPUSIM_OPS_COLLECTIVES_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tpusim/base/status.h"
#include "tpusim/ir/ir.h"
#include "tpusim/tensor/tensor.h"

namespace tpusim::ops {

// A process's place as one number: replica_id * num_partitions + partition_id.
using ProcessId = int64_t;

// How a grid spread over several OS processes (hosts; `mpirun -np K`) reaches
// the processes that run elsewhere. Each host runs some of the grid's
// processes against its own Collectives; a host's link carries what its
// processes contribute to a meeting to the other hosts of the meeting's
// group, and hands what arrives to Collectives::Deliver. See tpusim/mpi.
class GridLink {
 public:
  virtual ~GridLink() = default;
  // The host that runs grid process `p`, and this host.
  virtual int HostOf(ProcessId p) const = 0;
  virtual int self_host() const = 0;
  // Carries process `from`'s `values` for meeting `meeting` of `group` to
  // `host`. May block until `host` takes them; never call with a lock held
  // that Deliver needs.
  virtual Status Post(int host, const std::string& meeting, const std::vector<ProcessId>& group,
                      ProcessId from, const std::vector<Tensor>& values) = 0;
  // Carries `values` sent on `channel` to process `to`, which `host` runs.
  // Same blocking rule as Post.
  virtual Status PostChannel(int host, int64_t channel, ProcessId to,
                             const std::vector<Tensor>& values) = 0;
  // Tells every other host that the grid failed.
  virtual void PostAbort(const Status& status) = 0;
};

class Collectives {
 public:
  Collectives(int64_t num_replicas, int64_t num_partitions);
  Collectives(const Collectives&) = delete;
  Collectives& operator=(const Collectives&) = delete;

  int64_t num_replicas() const { return num_replicas_; }
  int64_t num_partitions() const { return num_partitions_; }
  int64_t num_processes() const { return num_replicas_ * num_partitions_; }

  // Blocks until every process of `group` has called Exchange with the same
  // `key` and returns their `values`, in `group` order. `key` names the op
  // instance (op name, channel); calls are matched by key and by how many
  // times each process has used that key with this group before, so the n-th
  // all_reduce of a process meets the n-th of its peers.
  // REQUIRES: `self` is in `group`.
  StatusOr<std::vector<std::vector<Tensor>>> Exchange(const std::vector<ProcessId>& group,
                                                      ProcessId self, const std::string& key,
                                                      std::vector<Tensor> values);

  // Spreads the grid over hosts: from now on only the processes with
  // link->HostOf(p) == link->self_host() run here. Deadlocks that span hosts
  // are not detected (no host sees every process). REQUIRES: called before
  // any process starts; `link` outlives this object.
  void Attach(GridLink* link);
  // What another host's process `from` contributed to `meeting` of `group`;
  // called by the link.
  void Deliver(const std::string& meeting, const std::vector<ProcessId>& group, ProcessId from,
               std::vector<Tensor> values);

  // Point-to-point channels: Send queues `values` on `channel` for process
  // `to` (kAnyProcess: whoever receives on the channel first), on this host
  // or through the link on another, and returns at once; Recv blocks until a
  // value for `self` (for `kAnyProcess` when `any`) is queued and takes the
  // oldest. kUnimplemented for kAnyProcess when the grid spans hosts.
  static constexpr ProcessId kAnyProcess = -1;
  Status Send(int64_t channel, ProcessId to, std::vector<Tensor> values);
  StatusOr<std::vector<Tensor>> Recv(int64_t channel, ProcessId self, bool any);
  // What another host's process sent on `channel` to `to`; called by the link.
  void DeliverChannel(int64_t channel, ProcessId to, std::vector<Tensor> values);

  // The grid's infeed: filled before the processes start, read by infeed ops
  // in arrival order. Empty -> kOutOfRange.
  void PushInfeed(std::vector<Tensor> values);
  StatusOr<std::vector<Tensor>> PopInfeed();
  // The grid's outfeed: what outfeed ops wrote, in arrival order.
  void PushOutfeed(std::vector<Tensor> values);
  std::vector<std::vector<Tensor>> TakeOutfeed();

  // Marks `self` as finished; others can no longer wait on it.
  void Finish(ProcessId self);
  // Stops the grid: every blocked and later blocking call fails. The first
  // status given wins and is what FirstError() returns. Other hosts are told
  // unless `from_remote` (the abort came from one).
  void Abort(const Status& status, bool from_remote = false);
  Status FirstError();

 private:
  struct Meeting;
  // The meeting `key` of `group`, created if new. REQUIRES: mu_.
  std::shared_ptr<Meeting> MeetingLocked(const std::string& key,
                                         const std::vector<ProcessId>& group);
  // Wakes the members of `m`'s group if every value has come. REQUIRES: mu_.
  void MaybeCompleteLocked(Meeting& m, const std::vector<ProcessId>& group);
  // Waits on cv_ until `ready()` holds. `what` describes the wait for
  // deadlock messages. REQUIRES: mu_ held through `lock`.
  template <typename Ready>
  Status Wait(std::unique_lock<std::mutex>& lock, ProcessId self, const std::string& what,
              Ready ready);
  // Aborts with a deadlock error if nothing can make progress. REQUIRES: mu_.
  void CheckDeadlockLocked();

  const int64_t num_replicas_;
  const int64_t num_partitions_;
  GridLink* link_ = nullptr;
  std::mutex mu_;
  std::condition_variable cv_;
  Status error_;
  int64_t finished_ = 0;
  std::map<ProcessId, std::string> waiting_;  // blocked process -> what it waits for
  std::map<std::string, std::shared_ptr<Meeting>> meetings_;
  std::map<std::string, int64_t> uses_;  // (process, key, group) -> times used
  // (channel, receiver) -> values queued.
  std::map<std::pair<int64_t, ProcessId>, std::deque<std::vector<Tensor>>> channels_;
  std::deque<std::vector<Tensor>> infeed_;
  std::vector<std::vector<Tensor>> outfeed_;
};

// The process groups that every instance of collective op `op` forms on a
// num_replicas x num_partitions grid, by its attributes and the spec's group
// strategies: each group in group order; for collective_permute and a
// send/recv's source_target_pairs, the (source, target) pairs. kInvalidArgument/kOutOfRange for ids
// outside the grid or named twice.
StatusOr<std::vector<std::vector<ProcessId>>> CollectiveGroups(const ir::Operation& op,
                                                               int64_t num_replicas,
                                                               int64_t num_partitions);

}  // namespace tpusim::ops

#endif  // TPUSIM_OPS_COLLECTIVES_H_
