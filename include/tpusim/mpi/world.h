// tpusim as an mpirun job. `mpirun -np K tpusim run prog --slice v5p-64`
// spreads the slice's devices over K processes in contiguous blocks (process
// r runs devices [r*N/K, (r+1)*N/K)), each device a thread as in one process;
// collectives between devices of different processes travel over Open MPI.
// Every process parses, compiles and times the program alike; process 0
// gathers the devices' results and alone writes files and the report, so a
// job gives the same values, timing and files as one process.
#ifndef TPUSIM_MPI_WORLD_H_
#define TPUSIM_MPI_WORLD_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tpusim/base/status.h"
#include "tpusim/ops/collectives.h"

namespace tpusim::mpi {

// This process's place in the job; MPI is initialised for its lifetime.
class World {
 public:
  // Joins the job when mpirun (or another PMIx launcher) started this
  // process with more than one process; nullptr otherwise, so that a plain
  // `tpusim` never initialises MPI. kUnimplemented if the MPI library cannot
  // serve several threads at once.
  static StatusOr<std::unique_ptr<World>> JoinIfLaunched(int* argc, char*** argv);
  ~World();
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  bool primary() const { return rank_ == 0; }

  // The first of the n grid processes that process `rank` runs; rank size()
  // gives n.
  int64_t FirstProcess(int rank, int64_t n) const { return rank * n / size_; }

  // The first failure among every process's `mine`, in rank order (ok if
  // none), on every process: a step that may fail on one process alone is
  // agreed on before the processes depend on each other. Every process of
  // the job must call it.
  Status Agree(const Status& mine);

  // Each process's `bytes`, in rank order, on process 0 (empty elsewhere).
  // Every process of the job must call it.
  StatusOr<std::vector<std::string>> Gather(const std::string& bytes);

 private:
  World(int rank, int size) : rank_(rank), size_(size) {}
  const int rank_;
  const int size_;
};

// Carries one grid's collectives between the processes of `world`: Post
// sends to the other process, and a receiver thread hands what comes to
// `grid`. Attach it to `grid` before its processes start.
class HostLink : public ops::GridLink {
 public:
  HostLink(World& world, ops::Collectives& grid);
  // Waits until every process of the job is done with its grid, then stops
  // the receiver.
  ~HostLink() override;

  int HostOf(ops::ProcessId p) const override;
  int self_host() const override { return world_.rank(); }
  Status Post(int host, const std::string& meeting, const std::vector<ops::ProcessId>& group,
              ops::ProcessId from, const std::vector<Tensor>& values) override;
  Status PostChannel(int host, int64_t channel, ops::ProcessId to,
                     const std::vector<Tensor>& values) override;
  void PostAbort(const Status& status) override;

 private:
  void Receive();

  World& world_;
  ops::Collectives& grid_;
  std::mutex send_mu_;  // a message's header and chunks go out together
  std::thread receiver_;
};

}  // namespace tpusim::mpi

#endif  // TPUSIM_MPI_WORLD_H_
