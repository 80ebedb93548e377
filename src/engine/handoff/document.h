// HandoffDocument: seed 004's facts-only handoff — what a session that ran
// out of context leaves for the next one. One of the three parts of the
// handoff (trigger.h: when; this file: what; continuation.h: how the task
// goes on).
//
// Where it sits: the agent calls the WriteHandoff tool (its one schema is
// tools::WriteHandoffToolSpec) when the engine asks it to; ParseHandoff()
// validates the arguments strictly: exactly spec_ref,
// status.{completed,in_progress,pending}, decisions[{what, why}], blockers,
// files_changed — any other field is rejected, next_steps above all
// (reasoning about the future would steer the next session; seed 004 keeps
// only facts). When the agent writes none, FallbackHandoff() makes one from
// the tool ledger and the movement history (fallback.h). The engine then checks files_changed
// against what really changed in the workspace (CheckFilesChanged) and saves the document as
// handoffs/NNNN.yaml (SaveHandoffFile); the continuation reads the newest
// (LoadLatestHandoff). Handoff files stay after the task completes (archive).
//
// Thread safety: plain values and pure functions; GitChangedPaths reads git
// through libgit2, the file functions write/read the task's handoffs/ and
// run on the job's thread.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "context/record_stores.h"
#include "core/env.h"
#include "core/json.h"
#include "core/status.h"

namespace maestro::engine {

struct HandoffDecision {
  std::string what;
  std::string why;
};

struct HandoffDocument {
  std::string spec_ref;
  std::vector<std::string> completed;
  std::vector<std::string> in_progress;
  std::vector<std::string> pending;
  std::vector<HandoffDecision> decisions;
  std::vector<std::string> blockers;
  std::vector<std::string> files_changed;
};

// Validates WriteHandoff arguments (an object, or a JSON string of one).
// Errors are kInvalidArgument with `field` naming the offending path
// ("next_steps", "status.done", "decisions[1].how").
Result<HandoffDocument> ParseHandoff(const Json& args);

Json HandoffToJson(const HandoffDocument& doc);

// The result of comparing files_changed with the workspace.
struct FilesCheck {
  std::string source;                            // "git", "ledger" or "git+ledger"
  std::vector<std::string> claimed_not_changed;  // in files_changed, not changed
  std::vector<std::string> changed_not_claimed;  // changed, not in files_changed
  bool matches() const { return claimed_not_changed.empty() && changed_not_claimed.empty(); }
  Json ToJson() const;
};

// The one form every path of the handoff takes before it is compared or
// written down: relative to the workspace, as git reports it. The model may
// name a file "/workspace/notes.md" (the mount it sees), "./notes.md",
// "notes.md" or "docs//notes.md"; the ledger keeps what it wrote. Lexical
// only (nothing is read): "." and ".." components and doubled or trailing
// slashes are folded, a path under tools::kWorkspaceMount or under
// `workspace` (the host path, when given) is made relative to it, and the
// workspace itself is "" (not a file). Any other absolute path, or one that
// climbs out with "..", is kept as it is (normalized), so it can never match
// a file of the workspace.
std::string WorkspaceRelativePath(const std::string& path, const std::string& workspace = {});

// The path of a files_changed entry: "src/a.cc — created" -> "src/a.cc",
// "`/workspace/src/a.cc` - edited" -> "src/a.cc" (WorkspaceRelativePath).
std::string PathOfEntry(const std::string& entry);

// Compares the document's paths with `actual` (workspace-relative, as
// WorkspaceRelativePath gives them); each path appears at most once in
// either list.
FilesCheck CheckFilesChanged(const HandoffDocument& doc, const std::set<std::string>& actual,
                             std::string source);

// Paths that differ from HEAD in `workspace`'s git work tree (modified,
// added, deleted, untracked; .gitignore respected), read in-process through
// tools::GitRepo (no `git` process). kNotFound when it is not a git work
// tree; another error when the repository is refused or unreadable.
Result<std::set<std::string>> GitChangedPaths(const std::string& workspace);

// YAML text of the document; `check` (if given) is appended under
// `verification:` — the engine's finding, kept apart from the agent's facts.
std::string HandoffToYaml(const HandoffDocument& doc, const FilesCheck* check = nullptr,
                          const std::string& source = "agent");
// Reads a saved handoff (the `verification` and `source` keys are ignored).
Result<HandoffDocument> HandoffFromYaml(const std::string& text);

// Saves `yaml` as the next handoffs/NNNN.yaml (0001, 0002, ...) atomically;
// returns its path.
Result<std::string> SaveHandoffFile(Env& env, const std::string& handoffs_dir,
                                    const std::string& yaml);
// The newest saved handoff, or nullopt when there is none.
Result<std::optional<HandoffDocument>> LoadLatestHandoff(Env& env, const std::string& handoffs_dir);
// How many handoffs/NNNN.yaml the task has written.
int CountHandoffFiles(const std::string& handoffs_dir);

}  // namespace maestro::engine
