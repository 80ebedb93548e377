#include "engine/handoff/continuation.h"

#include <fmt/format.h>

#include <filesystem>
#include <set>

#include "context/task_context.h"

namespace fs = std::filesystem;

namespace maestro::engine {
std::string ContinuationUserMessage(const std::string& instruction, const HandoffDocument& doc) {
  return "## Handoff from the previous session (facts only)\n"
         "The previous session of this task ran out of context and recorded these facts. Check "
         "them against the files; the spec below is authoritative where they disagree.\n\n" +
         HandoffToYaml(doc) + "\n## Task instruction (spec: " + doc.spec_ref + ")\n" + instruction;
}

Result<HandoffResult> CompleteHandoff(context::TaskContext& ctx, const HandoffDocument& doc,
                                      const HandoffInputs& in) {
  HandoffResult r;
  std::set<std::string> actual;
  std::string source = "ledger";
  // The ledger keeps paths as the model wrote them ("/workspace/a.md",
  // "./a.md"); git reports "a.md". Both are compared in one form.
  MAESTRO_ASSIGN_OR_RETURN(std::set<std::string> ledger, ctx.tools().ChangedPaths());
  for (const auto& p : ledger) {
    if (std::string rel = WorkspaceRelativePath(p, in.workspace); !rel.empty()) actual.insert(rel);
  }
  if (!in.workspace.empty()) {
    auto git = GitChangedPaths(in.workspace);
    if (git.ok()) {
      actual.insert(git->begin(), git->end());
      source = "git+ledger";
    }
  }
  r.check = CheckFilesChanged(doc, actual, source);
  std::string yaml = HandoffToYaml(doc, &r.check, in.fallback ? "engine" : "agent");
  MAESTRO_ASSIGN_OR_RETURN(r.path, SaveHandoffFile(ctx.env(), ctx.handoffs_dir(), yaml));

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

bool HandedOffTo(Store& store, const Job& job) {
  if (job.continued_from_job_id.empty()) return false;
  auto prev = store.GetJob(job.continued_from_job_id);
  return prev.ok() && prev->status == JobStatus::kSucceeded &&
         prev->result.rfind("handoff ", 0) == 0 &&
         prev->result.find("continued in job " + job.id) != std::string::npos;
}

}  // namespace maestro::engine
