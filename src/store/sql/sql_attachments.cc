// Attachments on SqlStore: the rows of the files sent with a task's
// instruction or a comment (the bytes are in the task's workspace, written
// by the API before the row), and their delivery into a prompt.
//
// A row is inserted in the transaction that creates its task or comment
// (CreateTask, PostComment), so a job never sees a comment whose files are
// not recorded yet. delivered_at works like a comment's: the engine lists
// the undelivered ones in the next prompt, then acknowledges them.
#include <vector>

#include "core/ids.h"
#include "store/sql/rows.h"
#include "store/sql/sql_store.h"

namespace maestro {

namespace {

constexpr const char* kAttachmentCols =
    "id, task_id, COALESCE(comment_id, ''), name, path, size, content_type, sha256, created_at, "
    "COALESCE(delivered_at, 0)";

Attachment ReadAttachment(const sql::Stmt& s) {
  Attachment a;
  a.id = s.Text(0);
  a.task_id = s.Text(1);
  a.comment_id = s.Text(2);
  a.name = s.Text(3);
  a.path = s.Text(4);
  a.size = s.Int(5);
  a.content_type = s.Text(6);
  a.sha256 = s.Text(7);
  a.created_at = s.Int(8);
  a.delivered_at = s.Int(9);
  return a;
}

}  // namespace

Status SqlStore::InsertAttachments(Tx& tx, const std::string& task_id,
                                   const std::string& comment_id,
                                   const std::vector<Attachment>& attachments) {
  if (attachments.empty()) return Status::Ok();
  for (const Attachment& a : attachments) {
    // One statement per row: Exec steps to the end without a reset, so a
    // statement is bound once.
    auto s = tx.conn.Prepare(
        "INSERT INTO attachments(id, task_id, comment_id, name, path, size, content_type, sha256, "
        "created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
    if (!s.ok()) return s.status();
    s->Bind(1, NewSortableId(tx.now))
        .Bind(2, task_id)
        .BindNullable(3, comment_id)
        .Bind(4, a.name)
        .Bind(5, a.path)
        .Bind(6, a.size)
        .Bind(7, a.content_type)
        .Bind(8, a.sha256)
        .Bind(9, tx.now);
    Status ins = s->Exec();
    if (ins.code() == StatusCode::kConflict) {
      return Conflict("attachment " + a.path + " of task " + task_id + " is recorded already");
    }
    MAESTRO_RETURN_IF_ERROR(ins);
  }
  return Status::Ok();
}

Result<std::vector<Attachment>> SqlStore::ListAttachments(const std::string& task_id) {
  std::vector<Attachment> out;
  Status st = Read([&](sql::Conn& conn) -> Status {
    auto s = conn.Prepare(std::string("SELECT ") + kAttachmentCols +
                          " FROM attachments WHERE task_id = ?1 ORDER BY id");
    if (!s.ok()) return s.status();
    s->Bind(1, task_id);
    return sql::CollectRows(*s, ReadAttachment, &out);
  });
  if (!st.ok()) return st;
  return out;
}

Result<std::vector<Attachment>> SqlStore::ListUndeliveredAttachments(const std::string& task_id) {
  std::vector<Attachment> out;
  Status st = Read([&](sql::Conn& conn) -> Status {
    auto s = conn.Prepare(std::string("SELECT ") + kAttachmentCols +
                          " FROM attachments WHERE task_id = ?1 AND delivered_at IS NULL"
                          " ORDER BY id");
    if (!s.ok()) return s.status();
    s->Bind(1, task_id);
    return sql::CollectRows(*s, ReadAttachment, &out);
  });
  if (!st.ok()) return st;
  return out;
}

Status SqlStore::AckDeliveredAttachments(const std::vector<std::string>& attachment_ids) {
  if (attachment_ids.empty()) return Status::Ok();
  return Write([&](Tx& tx) -> Status {
    for (const auto& id : attachment_ids) {
      auto s = tx.conn.Prepare(
          "UPDATE attachments SET delivered_at = ?2 WHERE id = ?1 AND delivered_at IS NULL");
      if (!s.ok()) return s.status();
      s->Bind(1, id).Bind(2, tx.now);
      MAESTRO_RETURN_IF_ERROR(s->Exec());
    }
    return Status::Ok();
  });
}

}  // namespace maestro
