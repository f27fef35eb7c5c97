// The Cloud TPU emulator's durable state: resources (nodes, queued
// resources, operations, jobs) as JSON documents in one SQLite file, plus a
// few named values (the simulated clock, counters).
//
// Every change happens inside a transaction (Begin ... Commit); a committed
// transaction survives the process being killed at any moment (SQLite's
// write-ahead log with full fsync), an uncommitted one leaves no trace.
// Statements are prepared with bound parameters: no SQL is built from
// request text. Not thread-safe; the caller serializes access.
#ifndef TPUSIM_CLOUD_STORE_H_
#define TPUSIM_CLOUD_STORE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tpusim/base/status.h"

struct sqlite3;

namespace tpusim::cloud {

struct Document {
  std::string name;    // the full resource name, unique
  std::string kind;    // "node", "queuedResource", "operation"
  std::string parent;  // "projects/p/locations/z"
  int64_t seq = 0;     // creation order, unique and increasing
  std::string body;    // JSON
  // Indexed, so that the simulation and the capacity checks need not read
  // every body: the resource's state, the simulated time at which it next
  // needs the world's attention (none: nothing scheduled), and the chips it
  // holds from a pool ("zone/generation") for a project.
  std::string state;
  std::optional<double> due;
  std::string pool, project;
  int64_t chips = 0;
};

class Store {
 public:
  // Opens or creates the database at `path` (":memory:" for a throwaway
  // one). kInternal if SQLite cannot open or initialize it.
  static StatusOr<std::unique_ptr<Store>> Open(const std::string& path);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  Status Begin();
  Status Commit();
  void Rollback();  // of an open transaction; a no-op otherwise

  // The document named `name`, or nullopt.
  StatusOr<std::optional<Document>> Get(const std::string& name);
  // Documents of `kind` in creation order: under `parent` (every parent when
  // empty), with seq > after_seq, at most `limit` (all when limit <= 0).
  StatusOr<std::vector<Document>> List(const std::string& kind, const std::string& parent,
                                       int64_t after_seq = 0, int64_t limit = 0);
  // Documents of `kind` due at `now` or before, in creation order.
  StatusOr<std::vector<Document>> ListDue(const std::string& kind, double now);
  // Chips held from `pool`, by `project` if not empty.
  StatusOr<int64_t> SumChips(const std::string& pool, const std::string& project);
  // How many documents of `kind` are in each state.
  StatusOr<std::map<std::string, int64_t>> CountByState(const std::string& kind);
  // Inserts `doc` or replaces the document of the same name (keeping `seq`
  // as given).
  Status Put(const Document& doc);
  Status Delete(const std::string& name);

  // A named value; `fallback` if unset.
  StatusOr<std::string> GetValue(const std::string& key, const std::string& fallback);
  Status SetValue(const std::string& key, const std::string& value);
  // The next creation-order number (persisted with the transaction).
  StatusOr<int64_t> NextSeq();
  // Rows changed since the store was opened: whether a transaction wrote.
  int64_t TotalChanges() const;

 private:
  explicit Store(sqlite3* db) : db_(db) {}
  Status Exec(const char* sql);

  sqlite3* db_;
};

}  // namespace tpusim::cloud

#endif  // TPUSIM_CLOUD_STORE_H_
