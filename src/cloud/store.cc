#include "tpusim/cloud/store.h"

#include <sqlite3.h>

namespace tpusim::cloud {
namespace {

Status SqlError(sqlite3* db, const std::string& what) {
  return Status(StatusCode::kInternal, "state database: " + what + ": " + sqlite3_errmsg(db));
}

// A prepared statement, finalized on scope exit.
class Statement {
 public:
  Statement(sqlite3* db, const char* sql) {
    if (sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr) != SQLITE_OK) stmt_ = nullptr;
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  bool ok() const { return stmt_ != nullptr; }

  Statement& Bind(int i, const std::string& s) {
    sqlite3_bind_text(stmt_, i, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Statement& Bind(int i, int64_t v) {
    sqlite3_bind_int64(stmt_, i, v);
    return *this;
  }
  Statement& Bind(int i, std::optional<double> v) {
    if (v) {
      sqlite3_bind_double(stmt_, i, *v);
    } else {
      sqlite3_bind_null(stmt_, i);
    }
    return *this;
  }
  // SQLITE_ROW, SQLITE_DONE or an error code.
  int Step() { return sqlite3_step(stmt_); }
  std::string Text(int col) const {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, col));
    return p ? std::string(p, sqlite3_column_bytes(stmt_, col)) : std::string();
  }
  int64_t Int(int col) const { return sqlite3_column_int64(stmt_, col); }
  std::optional<double> Real(int col) const {
    if (sqlite3_column_type(stmt_, col) == SQLITE_NULL) return std::nullopt;
    return sqlite3_column_double(stmt_, col);
  }

 private:
  sqlite3_stmt* stmt_ = nullptr;
};

#define TPUSIM_DOCUMENT_COLUMNS "name, kind, parent, seq, body, state, due, pool, project, chips"

Document ReadDocument(const Statement& s) {
  return Document{s.Text(0), s.Text(1), s.Text(2), s.Int(3),  s.Text(4),
                  s.Text(5), s.Real(6), s.Text(7), s.Text(8), s.Int(9)};
}

StatusOr<std::vector<Document>> ReadAll(sqlite3* db, Statement& s, const std::string& what) {
  std::vector<Document> out;
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) out.push_back(ReadDocument(s));
  if (rc != SQLITE_DONE) return SqlError(db, what);
  return out;
}

constexpr const char* kSchema = R"sql(
  CREATE TABLE IF NOT EXISTS documents (
    name TEXT PRIMARY KEY, kind TEXT NOT NULL, parent TEXT NOT NULL,
    seq INTEGER NOT NULL, body TEXT NOT NULL, state TEXT NOT NULL, due REAL,
    pool TEXT NOT NULL, project TEXT NOT NULL, chips INTEGER NOT NULL);
  CREATE INDEX IF NOT EXISTS documents_by_kind ON documents (kind, parent, seq);
  CREATE INDEX IF NOT EXISTS documents_by_due ON documents (kind, due);
  CREATE INDEX IF NOT EXISTS documents_by_seq ON documents (kind, seq);
  CREATE INDEX IF NOT EXISTS documents_by_pool ON documents (pool, project, chips);
  CREATE TABLE IF NOT EXISTS kv (key TEXT PRIMARY KEY, value TEXT NOT NULL);
)sql";

}  // namespace

StatusOr<std::unique_ptr<Store>> Store::Open(const std::string& path) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
      SQLITE_OK) {
    Status st = Status(StatusCode::kInternal, "cannot open state database " + path + ": " +
                                                  (db ? sqlite3_errmsg(db) : "out of memory"));
    sqlite3_close(db);
    return st;
  }
  std::unique_ptr<Store> store(new Store(db));
  sqlite3_busy_timeout(db, 5000);
  // WAL with a full fsync per commit: a committed transaction survives a
  // crash; readers never see a half-written one.
  TPUSIM_RETURN_IF_ERROR(store->Exec("PRAGMA journal_mode=WAL"));
  TPUSIM_RETURN_IF_ERROR(store->Exec("PRAGMA synchronous=NORMAL"));
  TPUSIM_RETURN_IF_ERROR(store->Exec(kSchema));
  return store;
}

Store::~Store() { sqlite3_close(db_); }

Status Store::Exec(const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string m = err ? err : "unknown error";
    sqlite3_free(err);
    return Status(StatusCode::kInternal, std::string("state database: ") + m);
  }
  return Status::Ok();
}

Status Store::Begin() { return Exec("BEGIN IMMEDIATE"); }
Status Store::Commit() { return Exec("COMMIT"); }
void Store::Rollback() {
  if (!sqlite3_get_autocommit(db_)) (void)Exec("ROLLBACK");
}

StatusOr<std::optional<Document>> Store::Get(const std::string& name) {
  Statement s(db_, "SELECT " TPUSIM_DOCUMENT_COLUMNS " FROM documents WHERE name = ?1");
  if (!s.ok()) return SqlError(db_, "get");
  s.Bind(1, name);
  const int rc = s.Step();
  if (rc == SQLITE_DONE) return std::optional<Document>();
  if (rc != SQLITE_ROW) return SqlError(db_, "get " + name);
  return std::optional<Document>(ReadDocument(s));
}

StatusOr<std::vector<Document>> Store::List(const std::string& kind, const std::string& parent,
                                            int64_t after_seq, int64_t limit) {
  // Two forms, so that SQLite walks the (kind, parent, seq) index to the page.
  Statement s(db_, parent.empty() ? "SELECT " TPUSIM_DOCUMENT_COLUMNS
                                    " FROM documents WHERE kind = ?1 AND ?2 = '' AND seq > ?3 "
                                    "ORDER BY seq LIMIT ?4"
                                  : "SELECT " TPUSIM_DOCUMENT_COLUMNS
                                    " FROM documents WHERE kind = ?1 AND parent = ?2 AND seq > ?3 "
                                    "ORDER BY kind, parent, seq LIMIT ?4");
  if (!s.ok()) return SqlError(db_, "list");
  s.Bind(1, kind).Bind(2, parent).Bind(3, after_seq).Bind(4, limit > 0 ? limit : int64_t{-1});
  return ReadAll(db_, s, "list " + kind);
}

StatusOr<std::vector<Document>> Store::ListDue(const std::string& kind, double now) {
  Statement s(db_, "SELECT " TPUSIM_DOCUMENT_COLUMNS
                   " FROM documents WHERE kind = ?1 AND due <= ?2 ORDER BY seq");
  if (!s.ok()) return SqlError(db_, "list due");
  s.Bind(1, kind).Bind(2, std::optional<double>(now));
  return ReadAll(db_, s, "list due " + kind);
}

StatusOr<int64_t> Store::SumChips(const std::string& pool, const std::string& project) {
  Statement s(db_,
              "SELECT COALESCE(SUM(chips), 0) FROM documents WHERE pool = ?1 AND "
              "(?2 = '' OR project = ?2)");
  if (!s.ok()) return SqlError(db_, "sum chips");
  s.Bind(1, pool).Bind(2, project);
  if (s.Step() != SQLITE_ROW) return SqlError(db_, "sum chips of " + pool);
  return s.Int(0);
}

StatusOr<std::map<std::string, int64_t>> Store::CountByState(const std::string& kind) {
  Statement s(db_, "SELECT state, COUNT(*) FROM documents WHERE kind = ?1 GROUP BY state");
  if (!s.ok()) return SqlError(db_, "count");
  s.Bind(1, kind);
  std::map<std::string, int64_t> out;
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) out[s.Text(0)] = s.Int(1);
  if (rc != SQLITE_DONE) return SqlError(db_, "count " + kind);
  return out;
}

Status Store::Put(const Document& doc) {
  Statement s(db_, "INSERT OR REPLACE INTO documents (" TPUSIM_DOCUMENT_COLUMNS
                   ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)");
  if (!s.ok()) return SqlError(db_, "put");
  s.Bind(1, doc.name).Bind(2, doc.kind).Bind(3, doc.parent).Bind(4, doc.seq).Bind(5, doc.body);
  s.Bind(6, doc.state).Bind(7, doc.due).Bind(8, doc.pool).Bind(9, doc.project).Bind(10, doc.chips);
  if (s.Step() != SQLITE_DONE) return SqlError(db_, "put " + doc.name);
  return Status::Ok();
}

Status Store::Delete(const std::string& name) {
  Statement s(db_, "DELETE FROM documents WHERE name = ?1");
  if (!s.ok()) return SqlError(db_, "delete");
  s.Bind(1, name);
  if (s.Step() != SQLITE_DONE) return SqlError(db_, "delete " + name);
  return Status::Ok();
}

StatusOr<std::string> Store::GetValue(const std::string& key, const std::string& fallback) {
  Statement s(db_, "SELECT value FROM kv WHERE key = ?1");
  if (!s.ok()) return SqlError(db_, "get value");
  s.Bind(1, key);
  const int rc = s.Step();
  if (rc == SQLITE_DONE) return fallback;
  if (rc != SQLITE_ROW) return SqlError(db_, "get value " + key);
  return s.Text(0);
}

Status Store::SetValue(const std::string& key, const std::string& value) {
  Statement s(db_, "INSERT OR REPLACE INTO kv (key, value) VALUES (?1, ?2)");
  if (!s.ok()) return SqlError(db_, "set value");
  s.Bind(1, key).Bind(2, value);
  if (s.Step() != SQLITE_DONE) return SqlError(db_, "set value " + key);
  return Status::Ok();
}

StatusOr<int64_t> Store::NextSeq() {
  TPUSIM_ASSIGN_OR_RETURN(std::string last, GetValue("seq", "0"));
  const int64_t next = std::stoll(last) + 1;
  TPUSIM_RETURN_IF_ERROR(SetValue("seq", std::to_string(next)));
  return next;
}

int64_t Store::TotalChanges() const { return sqlite3_total_changes64(db_); }

}  // namespace tpusim::cloud
