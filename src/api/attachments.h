// Attachments at the HTTP edge: the files a person sends with a new task
// (POST /api/local/tasks) or a comment (POST /api/local/tasks/:id/comments),
// from a multipart/form-data body or a JSON `attachments` array.
//
// Where it sits: the route reads the request into an UploadRequest (its
// JSON fields + the files), checked against the `attachments:` limits
// before anything is written; then WriteAttachments puts the files in the
// task's workspace under attachments/ (beneath its TreeRoot) and the store
// records them in the same transaction as the task or comment
// (Store::CreateTask / PostComment). The engine lists them in the next
// prompt (engine/prompt/attachment_context.h).
//
// Request shapes (docs/api.md "Attachments"):
//   multipart/form-data: one part named `json` holding the same JSON object
//     the JSON route takes, plus any number of file parts (parts with a
//     filename; their part name is free); no other plain field.
//   application/json: the usual object plus `attachments: [{name,
//     content_base64, type?}]` for small files.
// Errors: more files than max_count, bad base64, a bad name → 400 naming
// the field or file; a file over max_bytes, or the files together over
// max_total_bytes → 413 naming the file.
//
// Thread safety: pure functions, except WriteAttachments, which writes files
// beneath the workspace's TreeRoot (two uploads to one space at once may pick the same name;
// the store's unique (task, path) index refuses the second record).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "api/http.h"
#include "api/uploaded_file.h"
#include "core/config.h"
#include "core/env.h"
#include "core/json.h"
#include "core/status.h"
#include "store/types.h"

namespace maestro::api {

// The directory under a workspace where attachments are stored.
inline constexpr const char* kAttachmentsDir = "attachments";

struct UploadRequest {
  Json fields = Json::object();  // the route's JSON fields, without "attachments"
  std::vector<UploadedFile> files;
};

// The body and files of `req`: multipart/form-data or a JSON object.
// REQUIRES: limits are positive.
Result<UploadRequest> ParseUploadRequest(const HttpRequest& req, const AttachmentsConfig& limits);

// The name a file is stored under: its last path component (a client may
// send "dir/a.txt" or "C:\\x\\a.txt"), control characters and
// `: * ? " < > |` replaced by '_', leading dots and spaces and trailing dots
// and spaces removed, at most 200 bytes (the extension kept). kInvalidArgument
// naming `field` when nothing is left or it is not UTF-8.
Result<std::string> SanitizeAttachmentName(std::string_view name, const std::string& field);

// The body limit of the upload routes: every file at its base64 size plus
// room for the JSON fields (http.max_body_bytes), never below that limit.
size_t UploadBodyLimit(const AttachmentsConfig& limits, size_t max_body_bytes);

// Writes `files` into <workspace_root>/attachments/ (created if missing; a
// symlink or file there is refused, kConflict), each under its name or, when
// that is taken on disk or earlier in `files`, "<stem>-N<ext>". Everything
// below the workspace root goes through a core/tree_root.h TreeRoot: the
// directory is made with mkdirat, each file written to a temporary created
// exclusively with O_NOFOLLOW and renamed beneath the root, so an
// attachments/ swapped for a symlink mid-upload makes the upload fail
// (kConflict) instead of writing outside the workspace. Returns the records
// (name, path relative to the workspace, size, type, sha256) for the store.
Result<std::vector<Attachment>> WriteAttachments(Env& env, const std::string& workspace_root,
                                                 const std::vector<UploadedFile>& files);

// Removes what WriteAttachments wrote (the store refused the request).
void RemoveAttachments(Env& env, const std::string& workspace_root,
                       const std::vector<Attachment>& written);

// {id, name, path, size, content_type, sha256, comment_id, created_at, delivered}.
Json AttachmentJson(const Attachment& a);

}  // namespace maestro::api
