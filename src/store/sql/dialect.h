// The few SQL constructs SQLite and PostgreSQL spell differently, as
// fragments SqlStore splices into otherwise shared statements.
#pragma once

#include <string>
#include <string_view>

namespace maestro::sql {

enum class Dialect { kSqlite, kPostgres };

// A subquery yielding the strings of a JSON array parameter, one per row:
// `j.model IN (<JsonTextArray(d, "?3")>)`.
inline std::string JsonTextArray(Dialect d, std::string_view param) {
  if (d == Dialect::kPostgres) {
    return "SELECT jsonb_array_elements_text(CAST(" + std::string(param) + " AS jsonb))";
  }
  return "SELECT value FROM json_each(" + std::string(param) + ")";
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

}  // namespace maestro::sql
