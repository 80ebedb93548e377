// Row <-> struct mapping for SqlStore: the column lists each SELECT uses
// and the readers that turn a stepped statement into a value.
#pragma once

#include <vector>

#include "store/sql/conn.h"
#include "store/sql/sql_store.h"
#include "store/types.h"

namespace maestro::sql {

extern const char* const kTaskCols;
extern const char* const kJobCols;
extern const char* const kCommentCols;
extern const char* const kRequestCols;
extern const char* const kGrantCols;
extern const char* const kEventCols;

Task ReadTask(const Stmt& s);
// Reads kJobCols from column `first_col` on.
Job ReadJob(const Stmt& s, int first_col = 0);
Comment ReadComment(const Stmt& s);
Request ReadRequest(const Stmt& s);
Grant ReadGrant(const Stmt& s);
Event ReadEvent(const Stmt& s);

// Steps `s` to the end, appending read(s) for every row to *out.
template <typename T, typename ReadFn>
Status CollectRows(Stmt& s, ReadFn read, std::vector<T>* out) {
  for (;;) {
    auto row = s.Step();
    if (!row.ok()) return row.status();
    if (!*row) return Status::Ok();
    out->push_back(read(s));
  }
}

// Inserts a comment (id and created_at assigned here) and its
// comment.created event inside the caller's transaction.
Result<Comment> InsertComment(SqlStore::Tx& tx, Comment c);

// kLeaseLost unless `job` is still running under `lease` (the fence of every
// worker write).
Status CheckLease(const Job& job, const Lease& lease);

// " AND kind IN ('interjection', 'reply', 'answer')": the comments a job
// delivers (policy::kDeliveredKinds), for a WHERE on comments.
const std::string& DeliveredKindsClause();

// Loads one job by id inside a transaction; kNotFound when absent.
Result<Job> LoadJob(sql::Conn& conn, const std::string& job_id);

// Appends an event row inside the caller's transaction; the id the database
// assigned goes to *id when given and known before commit (on PostgreSQL
// the row goes in at commit: read the id from the committed TxEffects).
Status InsertEvent(SqlStore::Tx& tx, const std::string& task_id, const std::string& job_id,
                   const std::string& type, const Json& payload, int64_t* id = nullptr);

}  // namespace maestro::sql
