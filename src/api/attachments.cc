#include "api/attachments.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "api/http_util.h"
#include "api/multipart.h"
#include "core/base64.h"
#include "core/hash.h"
#include "core/tree_root.h"
#include "core/utf8.h"

namespace maestro::api {

namespace {

constexpr size_t kMaxNameBytes = 200;
constexpr const char* kDefaultType = "application/octet-stream";
constexpr const char* kField = "attachments";

// A content type as stored: lowercased type/subtype, no parameters, or the
// default when it is missing or not of that form.
std::string CleanType(std::string_view type) {
  std::string t(type.substr(0, type.find(';')));
  std::string out;
  for (char c : t) {
    if (c == ' ' || c == '\t') continue;
    out += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  }
  const size_t slash = out.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == out.size() || out.size() > 127) {
    return kDefaultType;
  }
  for (char c : out) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    std::string_view("!#$&^_.+-/").find(c) != std::string_view::npos;
    if (!ok) return kDefaultType;
  }
  return out;
}

// attachments[i].<key> as a string: absent → "" (or a 400 when
// `required`), another type → a 400 naming the field.
Status StringMember(const Json& item, const std::string& field, const char* key, bool required,
                    std::string* out) {
  auto it = item.find(key);
  if (it == item.end() || it->is_null()) {
    if (!required) return Status::Ok();
    return InvalidArgument(fmt::format("{}.{} is required", field, key), field + "." + key);
  }
  if (!it->is_string()) {
    return InvalidArgument(fmt::format("{}.{} must be a string", field, key), field + "." + key);
  }
  *out = it->get<std::string>();
  return Status::Ok();
}

// The files of a JSON `attachments` array.
Status FilesFromJson(const Json& list, std::vector<UploadedFile>* out) {
  if (!list.is_array()) {
    return InvalidArgument("attachments must be an array of {name, content_base64, type?}", kField);
  }
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string field = fmt::format("attachments[{}]", i);
    const Json& item = list[i];
    if (!item.is_object()) {
      return InvalidArgument(field + " must be an object {name, content_base64, type?}", field);
    }
    for (const auto& [key, _] : item.items()) {
      if (key != "name" && key != "content_base64" && key != "type") {
        return InvalidArgument(
            fmt::format("unknown field '{}' in {}; known: name, content_base64, type",
                        SafeEcho(key), field),
            field + "." + SafeEcho(key));
      }
    }
    std::string name, b64, type;
    MAESTRO_RETURN_IF_ERROR(StringMember(item, field, "name", true, &name));
    MAESTRO_RETURN_IF_ERROR(StringMember(item, field, "content_base64", true, &b64));
    MAESTRO_RETURN_IF_ERROR(StringMember(item, field, "type", false, &type));
    UploadedFile f;
    f.field = field;
    auto clean = SanitizeAttachmentName(name, field + ".name");
    if (!clean.ok()) return clean.status();
    f.name = *clean;
    auto bytes = Base64Decode(b64);
    if (!bytes) {
      return InvalidArgument(
          fmt::format("{}.content_base64 of '{}' is not base64 (RFC 4648, padded, no line breaks)",
                      field, f.name),
          field + ".content_base64");
    }
    f.bytes = std::move(*bytes);
    f.content_type = CleanType(type);
    out->push_back(std::move(f));
  }
  return Status::Ok();
}

Status FromMultipart(const HttpRequest& req, const AttachmentsConfig& limits, UploadRequest* out) {
  auto parts = ParseMultipart(req.Header("Content-Type"), req.body,
                              static_cast<size_t>(limits.max_count) + 2);
  if (!parts.ok()) return parts.status();
  bool have_json = false;
  for (const MultipartPart& p : *parts) {
    if (p.filename) {
      UploadedFile f;
      f.field = SafeEcho(*p.filename, 120);
      auto clean = SanitizeAttachmentName(*p.filename, f.field);
      if (!clean.ok()) return clean.status();
      f.name = *clean;
      f.content_type = CleanType(p.content_type);
      f.bytes = std::string(p.body);
      out->files.push_back(std::move(f));
    } else if (p.name == "json") {
      if (have_json) return InvalidArgument("send one json part", "json");
      have_json = true;
      auto fields = ParseObject(std::string(p.body));
      if (!fields.ok()) {
        return InvalidArgument("the json part must be a JSON object: " + fields.status().message(),
                               "json");
      }
      out->fields = std::move(*fields);
    } else {
      return InvalidArgument(
          fmt::format("unknown form field '{}': send the fields in one part named json",
                      SafeEcho(p.name)),
          SafeEcho(p.name));
    }
  }
  if (!have_json) {
    return InvalidArgument("a multipart request needs a part named json with the fields", "json");
  }
  if (auto a = out->fields.find(kField); a != out->fields.end()) {
    MAESTRO_RETURN_IF_ERROR(FilesFromJson(*a, &out->files));
    out->fields.erase(a);
  }
  return Status::Ok();
}

Status CheckLimits(const std::vector<UploadedFile>& files, const AttachmentsConfig& limits) {
  if (static_cast<int64_t>(files.size()) > limits.max_count) {
    return InvalidArgument(
        fmt::format("{} files attached; at most {} per request", files.size(), limits.max_count),
        kField);
  }
  int64_t total = 0;
  for (const UploadedFile& f : files) {
    const int64_t size = static_cast<int64_t>(f.bytes.size());
    if (size > limits.max_bytes) {
      return Status(StatusCode::kResourceExhausted,
                    fmt::format("attachment '{}' is {} bytes; at most {} per file", f.name, size,
                                limits.max_bytes),
                    f.name);
    }
    total += size;
    if (total > limits.max_total_bytes) {
      return Status(StatusCode::kResourceExhausted,
                    fmt::format("attachment '{}' brings the files to {} bytes; at most {} per "
                                "request",
                                f.name, total, limits.max_total_bytes),
                    f.name);
    }
  }
  return Status::Ok();
}

// "<stem>-N<ext>" for N = 1, 2, ...: the extension is what follows the
// last dot (none for a name whose only dot is its first character).
std::string Suffixed(const std::string& name, int n) {
  const size_t dot = name.rfind('.');
  const bool ext = dot != std::string::npos && dot > 0;
  const std::string stem = ext ? name.substr(0, dot) : name;
  return fmt::format("{}-{}{}", stem, n, ext ? name.substr(dot) : "");
}

}  // namespace

Result<UploadRequest> ParseUploadRequest(const HttpRequest& req, const AttachmentsConfig& limits) {
  UploadRequest out;
  if (IsMultipartFormData(req.Header("Content-Type"))) {
    MAESTRO_RETURN_IF_ERROR(FromMultipart(req, limits, &out));
  } else {
    auto body = ParseObject(req.body);
    if (!body.ok()) return body.status();
    out.fields = std::move(*body);
    if (auto a = out.fields.find(kField); a != out.fields.end()) {
      if (!a->is_null()) MAESTRO_RETURN_IF_ERROR(FilesFromJson(*a, &out.files));
      out.fields.erase(a);
    }
  }
  MAESTRO_RETURN_IF_ERROR(CheckLimits(out.files, limits));
  return out;
}

Result<std::string> SanitizeAttachmentName(std::string_view name, const std::string& field) {
  if (!IsValidUtf8(name)) {
    return InvalidArgument("the name of " + field + " is not valid UTF-8", field);
  }
  const size_t sep = name.find_last_of("/\\");
  std::string_view base = sep == std::string_view::npos ? name : name.substr(sep + 1);
  std::string out;
  for (char c : base) {
    const unsigned char u = static_cast<unsigned char>(c);
    const bool bad =
        u < 0x20 || u == 0x7F || std::string_view(":*?\"<>|").find(c) != std::string_view::npos;
    out += bad ? '_' : c;
  }
  // No hidden files and no "." / "..": leading dots go; Windows drops
  // trailing dots and spaces, so they go too.
  const size_t start = out.find_first_not_of(". ");
  out = start == std::string::npos ? "" : out.substr(start);
  while (!out.empty() && (out.back() == '.' || out.back() == ' ')) out.pop_back();
  if (out.empty()) {
    return InvalidArgument(
        fmt::format("attachment name '{}' ({}) has no usable characters", SafeEcho(name), field),
        field);
  }
  if (out.size() > kMaxNameBytes) {
    const size_t dot = out.rfind('.');
    std::string ext = dot != std::string::npos && out.size() - dot <= 16 ? out.substr(dot) : "";
    out = std::string(Utf8Prefix(out, kMaxNameBytes - ext.size())) + ext;
  }
  return out;
}

size_t UploadBodyLimit(const AttachmentsConfig& limits, size_t max_body_bytes) {
  // base64 is 4/3 of the bytes; a multipart part's headers are well under
  // 1 KiB each.
  const int64_t files = limits.max_total_bytes / 3 * 4 + 4 + limits.max_count * 1024;
  return std::max(max_body_bytes, max_body_bytes + static_cast<size_t>(files));
}

namespace {

// Writes one file as <attachments>/<name> beneath `root`: a fresh temporary
// (created exclusively, O_NOFOLLOW), synced, then renamed over the name.
Status WriteOne(const TreeRoot& root, const std::string& name, const std::string& bytes) {
  const std::string dir = kAttachmentsDir;
  const std::string tmp = dir + "/." + name + ".tmp";
  const std::string path = dir + "/" + name;
  root.Remove(tmp).IgnoreError();  // debris of a crash, never followed
  Status st = [&]() -> Status {
    MAESTRO_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> f,
                             root.OpenWrite(tmp, 0644, /*exclusive=*/true));
    MAESTRO_RETURN_IF_ERROR(f->Append(bytes));
    MAESTRO_RETURN_IF_ERROR(f->Sync());
    MAESTRO_RETURN_IF_ERROR(f->Close());
    return root.Rename(tmp, path);
  }();
  if (!st.ok()) root.Remove(tmp).IgnoreError();
  return st;
}

}  // namespace

Result<std::vector<Attachment>> WriteAttachments(Env& env, const std::string& workspace_root,
                                                 const std::vector<UploadedFile>& files) {
  std::vector<Attachment> written;
  if (files.empty()) return written;
  // The workspace root is the host's (trusted) path; everything below it is
  // the agent's, so it is touched only through the TreeRoot.
  if (Status made = env.CreateDirs(workspace_root); !made.ok()) return made;
  MAESTRO_ASSIGN_OR_RETURN(TreeRoot root, TreeRoot::Open(workspace_root));
  auto info = root.Stat(kAttachmentsDir);
  if (info.ok() && info->type != DirEntry::Type::kDir) {
    return Conflict("the workspace's attachments/ is not a directory: move it away first");
  }
  if (!info.ok() && info.status().code() != StatusCode::kNotFound) return info.status();
  if (Status made = root.MakeDirs(kAttachmentsDir); !made.ok()) {
    if (made.field() == "path" || made.field() == "type") {
      return Conflict("the workspace's attachments/ is not a directory: move it away first");
    }
    return made;
  }
  std::set<std::string> taken;
  auto present = root.List(kAttachmentsDir);
  if (!present.ok()) {
    return Conflict("the workspace's attachments/ cannot be listed: " + present.status().message());
  }
  for (const TreeEntry& e : *present) taken.insert(e.name);
  for (const UploadedFile& f : files) {
    std::string name = f.name;
    for (int n = 1; taken.count(name); ++n) name = Suffixed(f.name, n);
    taken.insert(name);
    Attachment a;
    a.name = name;
    a.path = std::string(kAttachmentsDir) + "/" + name;
    a.size = static_cast<int64_t>(f.bytes.size());
    a.content_type = f.content_type;
    a.sha256 = Sha256Hex(f.bytes);
    if (Status st = WriteOne(root, name, f.bytes); !st.ok()) {
      RemoveAttachments(env, workspace_root, written);
      if (st.code() == StatusCode::kInvalidArgument) {
        // attachments/ was swapped for a symlink (or a file) meanwhile.
        return Conflict("the workspace's attachments/ changed while writing: " + st.message());
      }
      return st;
    }
    written.push_back(std::move(a));
  }
  root.SyncDir(kAttachmentsDir).IgnoreError();  // best effort: the records are the truth
  return written;
}

void RemoveAttachments(Env& /*env*/, const std::string& workspace_root,
                       const std::vector<Attachment>& written) {
  if (written.empty()) return;
  auto root = TreeRoot::Open(workspace_root);
  if (!root.ok()) return;
  // Remove unlinks the last component itself, beneath the root: a symlink
  // swapped in for attachments/ is refused, never followed.
  for (const Attachment& a : written) root->Remove(a.path).IgnoreError();
}

Json AttachmentJson(const Attachment& a) {
  return {{"id", a.id},
          {"name", a.name},
          {"path", a.path},
          {"size", a.size},
          {"content_type", a.content_type},
          {"sha256", a.sha256},
          {"comment_id", a.comment_id},
          {"created_at", a.created_at},
          {"delivered", a.delivered_at != 0}};
}

}  // namespace maestro::api
