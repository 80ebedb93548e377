// Attachments in the prompt: how the files a person sent (api/attachments.h,
// Store::ListUndeliveredAttachments) reach the model.
//
// Where it sits: PieceExecutor::SeedPrompt puts the task's attachments no
// prompt has listed yet into the seed's dynamic context (the one final user
// message — never the system message, whose bytes must stay the same for
// the prompt cache); the agent loop, at each iteration boundary after the
// interjections, appends a user message for files that arrived while the
// job runs. Either way the files are listed by path relative to the
// workspace (the agent reads them with ReadFile) and, for a profile with
// `vision: true`, images (png, jpeg, webp, gif) also go as OpenAI image
// content parts (data: URLs) of that same user message. They are
// acknowledged after the message is written; a crash in between lists
// them once more in the next run (harmless, unlike a comment twice).
//
// Thread safety: functions of the job's thread; they read the store and
// the workspace.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/env.h"
#include "core/status.h"
#include "engine/prompt/prompt_builder.h"
#include "store/store.h"

namespace maestro::engine {

// image/png, image/jpeg, image/webp, image/gif: what vision models take.
bool IsImageType(std::string_view content_type);

struct TakenAttachments {
  std::vector<Attachment> rows;     // to acknowledge once written
  std::vector<AttachedFile> files;  // what the prompt shows, in the same order
};

// The task's attachments no prompt has listed yet. With `vision`, an image
// is read from `workspace_root` into a data: URL (beneath its TreeRoot: no
// symlink followed, at most the uploaded size); one that cannot be read
// (the agent removed it or put a symlink there) is listed without.
Result<TakenAttachments> TakeAttachments(AttachmentRecords& store, Env& env,
                                         const std::string& task_id,
                                         const std::string& workspace_root, bool vision);

Status AckAttachments(AttachmentRecords& store, const std::vector<Attachment>& rows);

// The iteration-boundary message: files the person attached while you work.
Json AttachmentsArrivedMessage(const std::vector<AttachedFile>& files);

}  // namespace maestro::engine
