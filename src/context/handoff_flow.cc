#include "context/handoff_flow.h"

#include <fmt/format.h>

#include <filesystem>
#include <map>

#include "context/durable_file.h"
#include "context/task_context.h"
#include "core/utf8.h"

namespace fs = std::filesystem;

namespace maestro::context {
namespace {

// "0007.yaml" -> 7; anything else -> 0.
int HandoffNumber(const std::string& name) {
  if (name.size() != 9 || name.substr(4) != ".yaml") return 0;
  int n = 0;
  for (int i = 0; i < 4; ++i) {
    if (name[static_cast<size_t>(i)] < '0' || name[static_cast<size_t>(i)] > '9') return 0;
    n = n * 10 + (name[static_cast<size_t>(i)] - '0');
  }
  return n;
}

int LatestNumber(const std::string& dir) {
  int best = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    best = std::max(best, HandoffNumber(e.path().filename().string()));
  }
  return best;
}

std::string RelativeTo(const std::string& path, const std::string& workspace) {
  fs::path p(path);
  if (!workspace.empty() && p.is_absolute()) {
    fs::path rel = p.lexically_relative(fs::path(workspace).lexically_normal());
    if (!rel.empty() && *rel.begin() != "..") return rel.lexically_normal().string();
  }
  return p.lexically_normal().string();
}

}  // namespace

HandoffMonitor::HandoffMonitor(const ContextConfig& c)
    : threshold_(static_cast<int64_t>(static_cast<double>(c.context_length) * c.handoff_threshold)),
      max_wait_(std::max(1, c.handoff_max_wait_iterations)) {}

HandoffMonitor::Action HandoffMonitor::OnIteration(int64_t estimate) {
  if (fallback_due_) return Action::kNone;  // already told the engine
  if (!requested_) {
    if (estimate <= threshold_) return Action::kNone;
    requested_ = true;
    return Action::kRequestHandoff;
  }
  if (++waited_ > max_wait_) {
    fallback_due_ = true;
    return Action::kWriteFallback;
  }
  return Action::kNone;
}

std::string HandoffRequestMessage() {
  return "[maestro] This session's context is nearly full. Stop the current work now and call "
         "the WriteHandoff tool once, recording only facts for a fresh session: spec_ref (where "
         "the task's spec is), status.completed / status.in_progress (say which part is done) / "
         "status.pending, decisions (what was chosen and why), blockers, and files_changed "
         "(\"path — what changed\" for every file you changed). Do not add next steps, plans or "
         "advice: the next session reads the spec and decides for itself. No other fields are "
         "accepted.";
}

Result<HandoffDocument> FallbackHandoff(const std::string& spec_ref, const ToolStore& tools,
                                        const std::string& job_id) {
  HandoffDocument d;
  d.spec_ref = spec_ref;
  std::map<std::string, std::string> files;  // path -> tool that last wrote it
  std::map<std::string, int> ok_calls;
  int64_t calls = 0;
  MAESTRO_RETURN_IF_ERROR(tools.ForEach([&](const ToolCallRecord& r) {
    ++calls;
    if (r.status == "success") {
      ++ok_calls[r.tool];
      if (IsFileWritingTool(r.tool) && r.args.contains("path") && r.args["path"].is_string()) {
        files[fs::path(r.args["path"].get<std::string>()).lexically_normal().string()] = r.tool;
      }
    } else if (r.job_id == job_id) {
      d.blockers.push_back(fmt::format("{} failed: {}", r.tool, Utf8Prefix(r.error, 300)));
    }
    return true;
  }));
  for (const auto& [path, tool] : files) d.files_changed.push_back(path + " — " + tool);
  std::vector<std::string> counts;
  for (const auto& [tool, n] : ok_calls) counts.push_back(fmt::format("{} x{}", tool, n));
  d.in_progress.push_back(fmt::format(
      "Session ended without a handoff from the agent; the engine recorded the tool ledger: {} "
      "calls ({}). Verify the state against the files and the spec.",
      calls, counts.empty() ? "none succeeded" : fmt::format("{}", fmt::join(counts, ", "))));
  if (d.blockers.size() > 10) d.blockers.erase(d.blockers.begin(), d.blockers.end() - 10);
  return d;
}

Result<std::string> SaveHandoffFile(const std::string& dir, const std::string& yaml) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Internal("create " + dir + ": " + ec.message());
  std::string path = fmt::format("{}/{:04d}.yaml", dir, LatestNumber(dir) + 1);
  MAESTRO_RETURN_IF_ERROR(ReplaceFileContent(path, yaml));
  return path;
}

Result<std::optional<HandoffDocument>> LoadLatestHandoff(const std::string& dir) {
  int n = LatestNumber(dir);
  if (n == 0) return std::optional<HandoffDocument>();
  MAESTRO_ASSIGN_OR_RETURN(std::string text, ReadSmallFile(fmt::format("{}/{:04d}.yaml", dir, n)));
  MAESTRO_ASSIGN_OR_RETURN(HandoffDocument d, HandoffFromYaml(text));
  return std::optional<HandoffDocument>(std::move(d));
}

std::string ContinuationUserMessage(const std::string& instruction, const HandoffDocument& doc) {
  return "## Handoff from the previous session (facts only)\n"
         "The previous session of this task ran out of context and recorded these facts. Check "
         "them against the files; the spec below is authoritative where they disagree.\n\n" +
         HandoffToYaml(doc) + "\n## Task instruction (spec: " + doc.spec_ref + ")\n" + instruction;
}

Status StartContinuation(MessageStore& messages, const std::string& job_id,
                         const Json& system_message, const std::string& instruction,
                         const HandoffDocument& doc, const std::vector<Json>& after,
                         const std::string& movement) {
  std::vector<Json> seed = {
      system_message, {{"role", "user"}, {"content", ContinuationUserMessage(instruction, doc)}}};
  seed.insert(seed.end(), after.begin(), after.end());
  // A rewrite: the overflowed session's conversation leaves the transcript,
  // so a continuation that later parks or retries replays from its handoff.
  return messages.SeedThread(job_id, seed, movement).status();
}

Result<HandoffResult> CompleteHandoff(TaskContext& ctx, const HandoffDocument& doc,
                                      const HandoffInputs& in) {
  HandoffResult r;
  std::set<std::string> actual;
  std::string source = "ledger";
  MAESTRO_ASSIGN_OR_RETURN(std::set<std::string> ledger, ctx.tools().ChangedPaths());
  for (const auto& p : ledger) actual.insert(RelativeTo(p, in.workspace));
  if (!in.workspace.empty()) {
    auto git = GitChangedPaths(in.workspace);
    if (git.ok()) {
      actual.insert(git->begin(), git->end());
      source = "git+ledger";
    }
  }
  r.check = CheckFilesChanged(doc, actual, source);
  std::string yaml = HandoffToYaml(doc, &r.check, in.fallback ? "engine" : "agent");
  MAESTRO_ASSIGN_OR_RETURN(r.path, SaveHandoffFile(ctx.handoffs_dir(), yaml));

  Comment c;
  c.task_id = ctx.task_id();
  c.job_id = in.job.id;
  c.author = in.fallback ? "system" : "agent";
  c.kind = CommentKind::kHandoff;
  c.body = yaml;
  MAESTRO_ASSIGN_OR_RETURN(r.comment, ctx.store().AddComment(c));

  NewJob nj;
  nj.task_id = ctx.task_id();
  nj.continued_from_job_id = in.job.id;
  // A subtask's continuation stays the parent's child, so the parent keeps
  // waiting for it instead of being woken by the handing-off job's end.
  nj.parent_job_id = in.job.parent_job_id;
  nj.resume_movement = in.resume_movement;
  nj.piece = in.job.piece;
  nj.model = in.job.model;
  nj.profile = in.job.profile;
  nj.adopt_children_of = in.job.id;
  MAESTRO_ASSIGN_OR_RETURN(r.continuation, ctx.store().EnqueueJob(nj));

  Json ev = {{"path", fs::path(r.path).filename().string()},
             {"fallback", in.fallback},
             {"continuation_job_id", r.continuation.id},
             {"files_check", r.check.ToJson()}};
  MAESTRO_RETURN_IF_ERROR(ctx.events().Append("handoff.written", ev, in.job.id).status());
  if (!r.check.matches()) {
    MAESTRO_RETURN_IF_ERROR(
        ctx.events().Append("handoff.files_mismatch", r.check.ToJson(), in.job.id).status());
  }
  return r;
}

JobOutcome HandoffJobOutcome(const HandoffResult& r) {
  return JobOutcome::Succeeded("handoff " + fs::path(r.path).filename().string() +
                               "; continued in job " + r.continuation.id);
}

}  // namespace maestro::context
