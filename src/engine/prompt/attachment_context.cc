#include "engine/prompt/attachment_context.h"

#include "core/base64.h"
#include "core/tree_root.h"

namespace maestro::engine {

bool IsImageType(std::string_view t) {
  return t == "image/png" || t == "image/jpeg" || t == "image/webp" || t == "image/gif";
}

Result<TakenAttachments> TakeAttachments(AttachmentRecords& store, Env& /*env*/,
                                         const std::string& task_id,
                                         const std::string& workspace_root, bool vision) {
  TakenAttachments out;
  MAESTRO_ASSIGN_OR_RETURN(out.rows, store.ListUndeliveredAttachments(task_id));
  for (const Attachment& a : out.rows) {
    AttachedFile f{a.name, a.path, a.size, a.content_type, ""};
    if (vision && IsImageType(a.content_type)) {
      // The file lies in the agent's workspace: read beneath its root with
      // no symlink followed (a link planted at the name, or attachments/
      // swapped for one, is refused rather than sent to the LLM), and no
      // more than the bytes uploaded.
      auto root = TreeRoot::Open(workspace_root);
      auto bytes = root.ok() ? ReadTreeFile(*root, a.path, static_cast<size_t>(a.size))
                             : Result<std::string>(root.status());
      if (bytes.ok()) f.image_url = "data:" + a.content_type + ";base64," + Base64Encode(*bytes);
    }
    out.files.push_back(std::move(f));
  }
  return out;
}

Status AckAttachments(AttachmentRecords& store, const std::vector<Attachment>& rows) {
  std::vector<std::string> ids;
  ids.reserve(rows.size());
  for (const Attachment& a : rows) ids.push_back(a.id);
  return store.AckDeliveredAttachments(ids);
}

Json AttachmentsArrivedMessage(const std::vector<AttachedFile>& files) {
  return UserMessageWithImages(
      "The user attached files while you work (in the workspace; read them with ReadFile):\n" +
          AttachedFilesText(files),
      files);
}

}  // namespace maestro::engine
