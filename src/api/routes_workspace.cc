// Workspace routes: what a task's agent left in its workspace and did with
// its tools, read-only, for the web UI's workspace pane and tool cards
// (docs/api.md "Workspace"):
//   GET /api/local/tasks/:id/files           the flat listing
//   GET /api/local/tasks/:id/files/<path>    one file (JSON, or ?raw=1 bytes)
//   GET /api/local/tasks/:id/diff            per job commit, uncommitted, total
//   GET /api/local/tasks/:id/tool-calls      tools.jsonl folded into cards
// Each checks the task's visibility first (TaskService::VisibleTask: 404 for
// a task the caller may not see). The workspace and the ledger are written
// by an agent: the reading rules are in workspace/workspace_files.h,
// workspace/git_repo.h and api/tool_cards.h; this file only maps them to HTTP.
#include <algorithm>
#include <filesystem>
#include <map>

#include "api/api_server.h"
#include "api/http_util.h"
#include "api/tool_cards.h"
#include "context/context_dirs.h"
#include "context/ledger.h"
#include "core/utf8.h"
#include "workspace/git_repo.h"
#include "workspace/workspace.h"
#include "workspace/workspace_files.h"
#include "workspace/workspace_path.h"

namespace maestro {

using api::Reply;
using api::ReplyError;

namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxTextBytes = 1024 * 1024;      // JSON content
constexpr size_t kMaxRawBytes = 16 * 1024 * 1024;  // ?raw=1
constexpr size_t kMaxHistory = 1000;               // commits walked for the diff
constexpr int kDefaultToolCalls = 200;
constexpr int kMaxToolCalls = 500;

struct TaskWorkspace {
  std::string root;  // canonical; "" when it does not exist (yet)
  bool ephemeral = true;
  std::string space;
};

Json FileDiffJson(const tools::GitFileDiff& f) {
  Json j = {{"path", f.path},
            {"status", f.status},
            {"binary", f.binary},
            {"additions", f.additions},
            {"deletions", f.deletions},
            {"patch", f.patch},
            {"patch_truncated", f.patch_truncated}};
  if (!f.old_path.empty()) j["old_path"] = f.old_path;
  return j;
}

Json FilesJson(const tools::GitDiffResult& d) {
  Json files = Json::array();
  for (const auto& f : d.files) files.push_back(FileDiffJson(f));
  return files;
}

// A filename for Content-Disposition: the base name with anything outside
// [A-Za-z0-9._-] replaced, so no quote, control byte or non-ASCII reaches
// the header.
std::string SafeFilename(const std::string& path) {
  std::string base = fs::path(path).filename().string();
  std::string out;
  for (char c : base) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    out += ok ? c : '_';
  }
  if (out.empty() || out == "." || out == "..") out = "file";
  return out.substr(0, 200);
}

// `?name=` as a non-negative integer within [min, max]; absent: `fallback`.
Status QueryInt(const api::HttpRequest& req, const char* name, int64_t min, int64_t max,
                int64_t fallback, int64_t* out) {
  std::string text = req.Query(name);
  *out = fallback;
  if (text.empty()) return Status::Ok();
  int64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9' || v > max) {
      return InvalidArgument(std::string(name) + " must be an integer between " +
                                 std::to_string(min) + " and " + std::to_string(max),
                             name);
    }
    v = v * 10 + (c - '0');
  }
  if (v < min || v > max) {
    return InvalidArgument(std::string(name) + " must be an integer between " +
                               std::to_string(min) + " and " + std::to_string(max),
                           name);
  }
  *out = v;
  return Status::Ok();
}

// What the workspace handlers work with.
struct WorkspaceRouteDeps {
  api::TaskService& tasks;
  Store& store;
  const ApiOptions& options;
};

// The task's workspace: its space's directory, else its ephemeral one.
TaskWorkspace WorkspaceOf(const WorkspaceRouteDeps& d, const Task& task) {
  TaskWorkspace ws;
  ws.ephemeral = task.space.empty();
  ws.space = task.space;
  const std::string dir = d.tasks.WorkspaceDirOf(task.id, task.space);
  std::error_code ec;
  if (!dir.empty() && fs::is_directory(dir, ec)) ws.root = fs::canonical(dir, ec).string();
  if (ec) ws.root.clear();
  return ws;
}

// The handlers, one per route (docs/api.md "Workspace"); another user's
// task is a 404 on each.

// GET /api/local/tasks/{id}/files: the workspace's files (bounded listing).
api::HttpResponse ListWorkspaceFiles(const WorkspaceRouteDeps& d, const api::HttpRequest& req) {
  auto task = d.tasks.VisibleTask(req.params[0], req.user);
  if (!task.ok()) return ReplyError(task.status());
  TaskWorkspace ws = WorkspaceOf(d, *task);
  tools::WorkspaceListing listing;
  if (!ws.root.empty()) listing = tools::ListWorkspace(ws.root);
  Json files = Json::array();
  for (const auto& e : listing.entries) {
    files.push_back(
        {{"path", e.path}, {"type", e.type}, {"size", e.size}, {"modified_at", e.modified_at}});
  }
  return Reply(200, {{"root_kind", ws.ephemeral ? "ephemeral" : "space"},
                     {"space", ws.space},
                     {"files", files},
                     {"truncated", listing.truncated}});
}

// GET /api/local/tasks/{id}/files/{path}[?raw=1]: one file, as text (bounded) or
// its bytes as a download.
api::HttpResponse ShowWorkspaceFile(const WorkspaceRouteDeps& d, const api::HttpRequest& req) {
  auto task = d.tasks.VisibleTask(req.params[0], req.user);
  if (!task.ok()) return ReplyError(task.status());
  const std::string path = api::DecodePath(req.params[1]);
  if (Status st = tools::CheckClientPath(path); !st.ok()) return ReplyError(st);
  TaskWorkspace ws = WorkspaceOf(d, *task);
  if (ws.root.empty()) return ReplyError(NotFound("the task has no workspace yet"));
  const bool raw = req.Query("raw") == "1";
  auto file =
      tools::ReadWorkspaceFile(*d.options.env, ws.root, path, raw ? kMaxRawBytes : kMaxTextBytes);
  if (!file.ok()) return ReplyError(file.status());
  if (raw) {
    if (file->truncated) {
      return ReplyError(Status(StatusCode::kResourceExhausted,
                               "the file is larger than 16 MiB, the most ?raw=1 serves"));
    }
    api::HttpResponse res;
    res.content_type = "application/octet-stream";
    res.body = std::move(file->bytes);
    res.headers.emplace_back("Content-Disposition",
                             "attachment; filename=\"" + SafeFilename(path) + "\"");
    res.headers.emplace_back("X-Content-Type-Options", "nosniff");
    return res;
  }
  const bool text = tools::LooksLikeText(file->bytes, file->truncated);
  return Reply(200, {{"path", file->path},
                     {"size", file->size},
                     {"binary", !text},
                     {"truncated", file->truncated},
                     {"content", text ? Json(std::string(Utf8Prefix(file->bytes, kMaxTextBytes)))
                                      : Json(nullptr)}});
}

// GET /api/local/tasks/{id}/diff: each job's commit, the uncommitted changes
// and the total, from the task's own repository.
api::HttpResponse WorkspaceDiff(const WorkspaceRouteDeps& d, const api::HttpRequest& req) {
  auto task = d.tasks.VisibleTask(req.params[0], req.user);
  if (!task.ok()) return ReplyError(task.status());
  TaskWorkspace ws = WorkspaceOf(d, *task);
  Json empty = {{"files", Json::array()}};
  Json none = {
      {"repository", false}, {"jobs", Json::array()}, {"uncommitted", empty}, {"total", empty}};
  if (ws.root.empty()) return Reply(200, none);
  // An ephemeral workspace's repository lives outside it (under the data
  // dir, never a `.git` the agent wrote); a space's own `.git` is checked
  // for symlinked metadata first (workspace/git_repo.h).
  tools::Workspace where;
  where.root = ws.root;
  where.ephemeral = ws.ephemeral;
  if (ws.ephemeral) where.git_dir = tools::WorkspaceGitDir(d.options.data_dir, task->id);
  auto repo = tools::OpenWorkspaceRepo(where);
  if (repo.status().code() == StatusCode::kNotFound) return Reply(200, none);
  if (!repo.ok()) return ReplyError(repo.status());
  auto history = repo->History(kMaxHistory);
  if (!history.ok()) return ReplyError(history.status());
  Json jobs = Json::array();
  const tools::GitCommitInfo* oldest = nullptr;
  for (const auto& c : *history) {
    auto job_id = tools::TaskCommitJob(c.message, task->id);
    if (!job_id) continue;
    auto diff = repo->DiffCommit(c.id);
    if (!diff.ok()) return ReplyError(diff.status());
    jobs.push_back({{"job_id", *job_id},
                    {"commit", c.id},
                    {"message", c.message},
                    {"files", FilesJson(*diff)},
                    {"truncated", diff->truncated}});
    oldest = &c;
  }
  // Oldest first, as the jobs ran.
  std::reverse(jobs.begin(), jobs.end());
  auto uncommitted = repo->DiffWorkdir();
  if (!uncommitted.ok()) return ReplyError(uncommitted.status());
  // Total: from before the task's first commit to the working tree (see
  // docs/api.md: other tasks' commits in between are included).
  auto total = oldest ? repo->DiffRange(oldest->parent) : repo->DiffWorkdir();
  if (!total.ok()) return ReplyError(total.status());
  return Reply(200, {{"repository", true},
                     {"jobs", jobs},
                     {"uncommitted",
                      {{"files", FilesJson(*uncommitted)}, {"truncated", uncommitted->truncated}}},
                     {"total", {{"files", FilesJson(*total)}, {"truncated", total->truncated}}}});
}

// GET /api/local/tasks/{id}/tool-calls[?after=&limit=]: the tool cards from the
// task's ledger.
api::HttpResponse ListToolCalls(const WorkspaceRouteDeps& d, const api::HttpRequest& req) {
  auto task = d.tasks.VisibleTask(req.params[0], req.user);
  if (!task.ok()) return ReplyError(task.status());
  int64_t after = 0, limit = 0;
  if (Status st = QueryInt(req, "after", 0, 1'000'000'000, 0, &after); !st.ok()) {
    return ReplyError(st);
  }
  if (Status st = QueryInt(req, "limit", 1, kMaxToolCalls, kDefaultToolCalls, &limit); !st.ok()) {
    return ReplyError(st);
  }
  std::vector<tools::LedgerRecord> records;
  if (!d.options.data_dir.empty()) {
    // The directory moves with the job's status: look again if it left
    // between the look-up and the read.
    context::ContextDirs dirs(d.options.data_dir);
    for (int attempt = 0; attempt < 2 && records.empty(); ++attempt) {
      auto dir = dirs.Locate(task->id);
      if (!dir.ok()) continue;
      auto read = tools::ToolLedger::Read(*dir);
      if (read.ok()) records = std::move(read).value();
    }
  }
  auto jobs = d.store.ListJobs(task->id);
  if (!jobs.ok()) return ReplyError(jobs.status());
  std::map<std::string, JobStatus> status_of;
  for (const auto& j : *jobs) status_of[j.id] = j.status;
  auto cards = tools::FoldToolCards(records, [&](const std::string& job_id) {
    auto it = status_of.find(job_id);
    return it != status_of.end() &&
           (it->second == JobStatus::kWaitingHuman || it->second == JobStatus::kWaitingSubtasks);
  });
  Json out = Json::array();
  const size_t from = std::min(cards.size(), static_cast<size_t>(after));
  const size_t to = std::min(cards.size(), from + static_cast<size_t>(limit));
  for (size_t i = from; i < to; ++i) {
    const auto& c = cards[i];
    out.push_back({{"job_id", c.job_id},
                   {"call_id", c.call_id},
                   {"tool", c.tool},
                   {"args", c.args},
                   {"read_only", c.read_only},
                   {"status", c.status},
                   {"result", c.result},
                   {"duration_ms", c.duration_ms},
                   {"started_at", c.started_at},
                   {"finished_at", c.finished_at ? Json(*c.finished_at) : Json(nullptr)}});
  }
  return Reply(200,
               {{"tool_calls", out}, {"next_after", to < cards.size() ? Json(to) : Json(nullptr)}});
}

}  // namespace

void ApiServer::WorkspaceRoutes() {
  using api::Need;
  using Req = api::HttpRequest;
  const WorkspaceRouteDeps d{tasks_, store_, options_};
  const std::string base = "/api/local/tasks/{uuid}";
  router_.Add("GET", base + "/files", Need::kRead,
              [d](const Req& r) { return ListWorkspaceFiles(d, r); });
  router_.Add("GET", base + "/files/{rest}", Need::kRead,
              [d](const Req& r) { return ShowWorkspaceFile(d, r); });
  router_.Add("GET", base + "/diff", Need::kRead,
              [d](const Req& r) { return WorkspaceDiff(d, r); });
  router_.Add("GET", base + "/tool-calls", Need::kRead,
              [d](const Req& r) { return ListToolCalls(d, r); });
}

}  // namespace maestro
