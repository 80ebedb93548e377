// The few SQL constructs SQLite and PostgreSQL spell differently, as
// fragments SqlStore splices into otherwise shared statements.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace maestro::sql {

enum class Dialect { kSqlite, kPostgres };

// The text `build(dialect)` makes, built once per dialect and kept: for
// statements assembled from fragments on a hot path. Each call site passes
// its own lambda, so each gets its own pair.
template <typename Build>
const std::string& PerDialect(Dialect d, Build build) {
  static const std::string sqlite = build(Dialect::kSqlite);
  static const std::string postgres = build(Dialect::kPostgres);
  return d == Dialect::kPostgres ? postgres : sqlite;
}

// A subquery yielding the strings of a JSON array parameter, one per row:
// `j.model IN (<JsonTextArray(d, "?3")>)`.
inline std::string JsonTextArray(Dialect d, std::string_view param) {
  if (d == Dialect::kPostgres) {
    return "SELECT jsonb_array_elements_text(CAST(" + std::string(param) + " AS jsonb))";
  }
  return "SELECT value FROM json_each(" + std::string(param) + ")";
}

// `col` is one of the values of a JSON array parameter: a key filter for a
// batched statement. PostgreSQL gets `col = ANY(ARRAY(…))`, which it
// evaluates once and probes `col`'s index with whatever the plan is generic
// or custom; `col IN (SELECT … jsonb …)` would be planned for 100 elements,
// often as a scan of the whole table — slow, and under SERIALIZABLE a
// predicate lock on every row.
inline std::string InJsonArray(Dialect d, std::string_view col, std::string_view param,
                               std::string_view type) {
  const std::string c(col), p(param), t(type);
  if (d == Dialect::kPostgres) {
    return c + " = ANY(ARRAY(SELECT CAST(x AS " + t + ") FROM jsonb_array_elements_text(CAST(" + p +
           " AS jsonb)) x))";
  }
  return c + " IN (SELECT value FROM json_each(" + p + "))";
}

// What a join `col = <alias>.<key>` with a JsonRecords batch adds to its
// WHERE. PostgreSQL: ` AND col = ANY(ARRAY(…))` of the records' `key`s — the
// join over a jsonb function alone is planned for 100 rows, often as a scan
// of the whole table. SQLite: nothing; it drives the join from the records
// and looks each row up by `col`, while an added `col IN (…)` made it do the
// reverse, every row found against every record — O(N²) json_extract calls
// (a finish of 16 jobs parsed its records 16 × 16 × 11 times).
inline std::string RecordsKeyFilter(Dialect d, std::string_view col, std::string_view param,
                                    std::string_view type, std::string_view key) {
  if (d != Dialect::kPostgres) return "";
  return " AND " + std::string(col) + " = ANY(ARRAY(SELECT CAST(x ->> '" + std::string(key) +
         "' AS " + std::string(type) + ") FROM jsonb_array_elements(CAST(" + std::string(param) +
         " AS jsonb)) x))";
}

// A column of JsonRecords: its name (also the JSON key) and SQL type.
struct RecordCol {
  const char* name;
  const char* type;  // TEXT | BIGINT
};

// The objects of a JSON array parameter as a table `alias` with one column
// per `cols` entry (a missing key or JSON null reads as NULL): how one
// statement takes a batch of rows, e.g. `UPDATE jobs SET … FROM <records>
// WHERE jobs.seq = v.n_seq`.
template <size_t N>
std::string JsonRecords(Dialect d, std::string_view param, const RecordCol (&cols)[N],
                        std::string_view alias) {
  std::string out;
  if (d == Dialect::kPostgres) {
    out = "jsonb_to_recordset(CAST(" + std::string(param) + " AS jsonb)) AS " + std::string(alias) +
          "(";
    for (size_t i = 0; i < N; ++i) {
      out += std::string(i ? ", " : "") + cols[i].name + " " + cols[i].type;
    }
    return out + ")";
  }
  out = "(SELECT ";
  for (size_t i = 0; i < N; ++i) {
    out += std::string(i ? ", " : "") + "json_extract(value, '$." + cols[i].name + "') AS " +
           cols[i].name;
  }
  return out + " FROM json_each(" + std::string(param) + ")) AS " + std::string(alias);
}

// The text of top-level field `key` of the JSON text in column `col`
// (NULL when absent).
inline std::string JsonField(Dialect d, std::string_view col, std::string_view key) {
  if (d == Dialect::kPostgres) {
    return "(CAST(" + std::string(col) + " AS jsonb) ->> '" + std::string(key) + "')";
  }
  return "json_extract(" + std::string(col) + ", '$." + std::string(key) + "')";
}

// Field `key` of the JSON in `col` as an integer (NULL when absent).
inline std::string JsonInt(Dialect d, std::string_view col, std::string_view key) {
  return "CAST(" + JsonField(d, col, key) + " AS BIGINT)";
}

// Field `key` of the JSON in `col` as 1 when it is true, else 0.
inline std::string JsonBool(Dialect d, std::string_view col, std::string_view key) {
  if (d == Dialect::kPostgres) {
    return "(CASE WHEN " + JsonField(d, col, key) + " = 'true' THEN 1 ELSE 0 END)";
  }
  return "COALESCE(" + JsonField(d, col, key) + ", 0)";
}

// 1-based position of `needle` in `haystack`, 0 when absent.
inline std::string Position(Dialect d, std::string_view haystack, std::string_view needle) {
  if (d == Dialect::kPostgres) {
    return "strpos(" + std::string(haystack) + ", " + std::string(needle) + ")";
  }
  return "instr(" + std::string(haystack) + ", " + std::string(needle) + ")";
}

// A table's index hint: SQLite's planner otherwise scans the partial index
// of another status; PostgreSQL has no hints and needs none.
inline std::string IndexedBy(Dialect d, std::string_view index) {
  if (d == Dialect::kPostgres) return "";
  return " INDEXED BY " + std::string(index);
}

// Event ids are the cursor of SSE resume and webhook delivery (`id > last`),
// so they must become visible in id order. PostgreSQL assigns identity
// values at insert, not at commit, so its engine inserts a transaction's
// event rows itself, at commit, under a lock held only for that last round
// trip (PgEngine::Write). SQLite's writers are serialized: rows go in at once.
inline bool DefersEvents(Dialect d) { return d == Dialect::kPostgres; }

// Appended to the claim pick: other claimers skip rows this one holds.
inline const char* ForUpdateSkipLocked(Dialect d) {
  return d == Dialect::kPostgres ? " FOR UPDATE OF j SKIP LOCKED" : "";
}

// Appended to a read of the jobs a transaction decides on (TxKind::kRowLocked
// explains the protocol): it waits for a writer that holds them, and under
// SERIALIZABLE fails (retryably) when one changed them since the
// transaction's snapshot. SQLite's writers are serialized: no clause.
// NO KEY: the foreign-key checks of inserts that reference the job (its
// comments, its children) need not wait.
inline const char* ForNoKeyUpdate(Dialect d) {
  return d == Dialect::kPostgres ? " FOR NO KEY UPDATE" : "";
}

// The claim pick's last filter, `task_free` (no running job of the task),
// and on PostgreSQL the task's claim lock: a claimer takes a task's
// advisory lock as it finds one of its jobs eligible, and passes over the
// tasks other claims hold. Without it, of two concurrent claims (READ
// COMMITTED: neither sees the other's uncommitted running job) one takes a
// task's first job and the other its second, and the later commit fails on
// jobs_one_running_per_task and reruns the whole batch. The CASE takes the
// lock only for a row that passed every other filter (PostgreSQL orders
// plain filters by cost: a task with a running job would be locked too).
// The lock ends with the claim's transaction, after its running job is
// visible. The key is (kClaimTaskLocks, hashtext(task id)); two tasks that
// share a hash only pass over each other while one is being claimed.
inline constexpr int kClaimTaskLocks = 7283452;
inline std::string TaskFreeAndLocked(Dialect d, const std::string& task_free) {
  if (d != Dialect::kPostgres) return task_free;
  return "CASE WHEN " + task_free + " THEN pg_try_advisory_xact_lock(" +
         std::to_string(kClaimTaskLocks) + ", hashtext(j.task_id)) ELSE FALSE END";
}

}  // namespace maestro::sql
