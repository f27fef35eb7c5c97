#include "tpusim/mpi/world.h"

#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "mpi/wire.h"

namespace tpusim::mpi {
namespace {

// A message is a header (kind, length) then its bytes in chunks, so that
// one message may exceed MPI's int counts.
enum Tag : int { kHeaderTag = 1, kBodyTag, kGatherHeaderTag, kGatherBodyTag };
enum class Kind : int64_t { kValues, kChannel, kAbort, kStop };
constexpr int64_t kChunk = int64_t{1} << 30;

void SendMessage(Kind kind, const std::string& bytes, int dest, int header_tag, int body_tag) {
  int64_t header[2] = {static_cast<int64_t>(kind), static_cast<int64_t>(bytes.size())};
  MPI_Send(header, 2, MPI_INT64_T, dest, header_tag, MPI_COMM_WORLD);
  for (int64_t at = 0; at < header[1]; at += kChunk) {
    MPI_Send(bytes.data() + at, static_cast<int>(std::min(kChunk, header[1] - at)), MPI_BYTE, dest,
             body_tag, MPI_COMM_WORLD);
  }
}

// Receives a message from `source` (MPI_ANY_SOURCE: any); returns its kind.
Kind ReceiveMessage(int source, int header_tag, int body_tag, std::string& bytes) {
  int64_t header[2];
  MPI_Status status;
  MPI_Recv(header, 2, MPI_INT64_T, source, header_tag, MPI_COMM_WORLD, &status);
  bytes.resize(static_cast<size_t>(header[1]));
  for (int64_t at = 0; at < header[1]; at += kChunk) {
    MPI_Recv(bytes.data() + at, static_cast<int>(std::min(kChunk, header[1] - at)), MPI_BYTE,
             status.MPI_SOURCE, body_tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  return static_cast<Kind>(header[0]);
}

// Open MPI's mpirun and PMIx launchers say so in the environment.
int LaunchedSize() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "PMI_SIZE"}) {
    if (const char* v = std::getenv(name)) return std::atoi(v);
  }
  return 1;
}

}  // namespace

StatusOr<std::unique_ptr<World>> World::JoinIfLaunched(int* argc, char*** argv) {
  if (LaunchedSize() <= 1) return std::unique_ptr<World>();
  int provided = 0;
  MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
  if (provided < MPI_THREAD_MULTIPLE) {
    MPI_Finalize();
    return Unimplemented("this MPI library cannot serve several threads at once");
  }
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return std::unique_ptr<World>(new World(rank, size));
}

World::~World() { MPI_Finalize(); }

StatusOr<std::vector<std::string>> World::Gather(const std::string& bytes) {
  if (!primary()) {
    SendMessage(Kind::kValues, bytes, 0, kGatherHeaderTag, kGatherBodyTag);
    return std::vector<std::string>();
  }
  std::vector<std::string> all(static_cast<size_t>(size_));
  all[0] = bytes;
  for (int r = 1; r < size_; ++r) {
    ReceiveMessage(r, kGatherHeaderTag, kGatherBodyTag, all[static_cast<size_t>(r)]);
  }
  return all;
}

Status World::Agree(const Status& mine) {
  const std::string& message = mine.message();
  int64_t local[2] = {static_cast<int64_t>(mine.code()), static_cast<int64_t>(message.size())};
  std::vector<int64_t> all(2 * static_cast<size_t>(size_));
  MPI_Allgather(local, 2, MPI_INT64_T, all.data(), 2, MPI_INT64_T, MPI_COMM_WORLD);
  std::vector<int> counts(static_cast<size_t>(size_)), offsets(static_cast<size_t>(size_));
  int total = 0;
  for (int r = 0; r < size_; ++r) {
    counts[r] = static_cast<int>(all[2 * r + 1]);
    offsets[r] = total;
    total += counts[r];
  }
  std::string messages(static_cast<size_t>(total), '\0');
  MPI_Allgatherv(message.data(), static_cast<int>(message.size()), MPI_CHAR, messages.data(),
                 counts.data(), offsets.data(), MPI_CHAR, MPI_COMM_WORLD);
  for (int r = 0; r < size_; ++r) {
    if (all[2 * r] == static_cast<int64_t>(StatusCode::kOk)) continue;
    return Status(static_cast<StatusCode>(all[2 * r]), messages.substr(offsets[r], counts[r]));
  }
  return Status::Ok();
}

HostLink::HostLink(World& world, ops::Collectives& grid)
    : world_(world), grid_(grid), receiver_([this] { Receive(); }) {}

HostLink::~HostLink() {
  // After the barrier no process sends to this one any more.
  MPI_Barrier(MPI_COMM_WORLD);
  {
    std::lock_guard<std::mutex> lock(send_mu_);
    SendMessage(Kind::kStop, "", world_.rank(), kHeaderTag, kBodyTag);
  }
  receiver_.join();
}

int HostLink::HostOf(ops::ProcessId p) const {
  // The last host r with FirstProcess(r) = floor(r n / K) <= p, i.e. the
  // largest r < (p + 1) K / n.
  const int64_t n = grid_.num_processes(), k = world_.size();
  return static_cast<int>(((p + 1) * k - 1) / n);
}

Status HostLink::Post(int host, const std::string& meeting,
                      const std::vector<ops::ProcessId>& group, ops::ProcessId from,
                      const std::vector<Tensor>& values) {
  std::string bytes;
  WriteString(meeting, bytes);
  WriteInt(static_cast<int64_t>(group.size()), bytes);
  for (ops::ProcessId p : group) WriteInt(p, bytes);
  WriteInt(from, bytes);
  WriteTensors(values, bytes);
  std::lock_guard<std::mutex> lock(send_mu_);
  SendMessage(Kind::kValues, bytes, host, kHeaderTag, kBodyTag);
  return Status::Ok();
}

Status HostLink::PostChannel(int host, int64_t channel, ops::ProcessId to,
                             const std::vector<Tensor>& values) {
  std::string bytes;
  WriteInt(channel, bytes);
  WriteInt(to, bytes);
  WriteTensors(values, bytes);
  std::lock_guard<std::mutex> lock(send_mu_);
  SendMessage(Kind::kChannel, bytes, host, kHeaderTag, kBodyTag);
  return Status::Ok();
}

void HostLink::PostAbort(const Status& status) {
  std::string bytes;
  WriteInt(static_cast<int64_t>(status.code()), bytes);
  WriteString(status.message(), bytes);
  std::lock_guard<std::mutex> lock(send_mu_);
  for (int r = 0; r < world_.size(); ++r) {
    if (r != world_.rank()) SendMessage(Kind::kAbort, bytes, r, kHeaderTag, kBodyTag);
  }
}

void HostLink::Receive() {
  std::string bytes;
  while (true) {
    const Kind kind = ReceiveMessage(MPI_ANY_SOURCE, kHeaderTag, kBodyTag, bytes);
    if (kind == Kind::kStop) return;
    std::string_view in(bytes);
    Status st = [&]() -> Status {
      if (kind == Kind::kAbort) {
        TPUSIM_ASSIGN_OR_RETURN(int64_t code, ReadInt(in));
        TPUSIM_ASSIGN_OR_RETURN(std::string message, ReadString(in));
        grid_.Abort(Status(static_cast<StatusCode>(code), message), /*from_remote=*/true);
        return Status::Ok();
      }
      if (kind == Kind::kChannel) {
        TPUSIM_ASSIGN_OR_RETURN(int64_t channel, ReadInt(in));
        TPUSIM_ASSIGN_OR_RETURN(int64_t to, ReadInt(in));
        if (to < 0 || to >= grid_.num_processes()) return Internal("a malformed channel message");
        TPUSIM_ASSIGN_OR_RETURN(std::vector<Tensor> values, ReadTensors(in));
        grid_.DeliverChannel(channel, to, std::move(values));
        return Status::Ok();
      }
      TPUSIM_ASSIGN_OR_RETURN(std::string meeting, ReadString(in));
      TPUSIM_ASSIGN_OR_RETURN(int64_t n, ReadInt(in));
      if (n < 0 || n > grid_.num_processes()) return Internal("a malformed collective message");
      std::vector<ops::ProcessId> group;
      for (int64_t i = 0; i < n; ++i) {
        TPUSIM_ASSIGN_OR_RETURN(int64_t p, ReadInt(in));
        group.push_back(p);
      }
      TPUSIM_ASSIGN_OR_RETURN(int64_t from, ReadInt(in));
      TPUSIM_ASSIGN_OR_RETURN(std::vector<Tensor> values, ReadTensors(in));
      grid_.Deliver(meeting, group, from, std::move(values));
      return Status::Ok();
    }();
    if (!st.ok()) grid_.Abort(st);
  }
}

}  // namespace tpusim::mpi
