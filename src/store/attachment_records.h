// AttachmentRecords: the attachments role of the Store (store/store.h) —
// the files sent with a task's instruction or a comment (recorded by
// TaskRecords::CreateTask / PostComment in the same transaction).
//
// Who uses it: the API lists a task's attachments (api/); the engine lists
// the undelivered ones in the next prompt and acknowledges them
// (engine/prompt/attachment_context.h).
//
// Thread safety: every method may be called from any thread concurrently.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "store/types.h"

namespace maestro {

class AttachmentRecords {
 public:
  virtual ~AttachmentRecords() = default;

  // ---- attachments (files sent with the instruction or a comment)
  // Every attachment of the task, oldest first.
  virtual Result<std::vector<Attachment>> ListAttachments(const std::string& task_id) = 0;
  // Those no prompt has listed yet, oldest first: the engine lists them in
  // the next prompt's dynamic context, then acknowledges them.
  virtual Result<std::vector<Attachment>> ListUndeliveredAttachments(
      const std::string& task_id) = 0;
  virtual Status AckDeliveredAttachments(const std::vector<std::string>& attachment_ids) = 0;
};

}  // namespace maestro
