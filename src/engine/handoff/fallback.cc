#include "engine/handoff/fallback.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <string_view>
#include <utility>

#include "core/durable_file.h"
#include "core/strings.h"
#include "core/utf8.h"
#include "tools/tool_names.h"

namespace maestro::engine {
namespace {

constexpr size_t kFallbackCommandBytes = 120;
constexpr size_t kFallbackLineBytes = 160;
constexpr size_t kFallbackErrorBytes = 200;

// At most `max` bytes of `s` on one line (whole UTF-8 characters, "…" when cut).
std::string OneLine(std::string_view s, size_t max) {
  std::string flat;
  for (char c : Trim(s)) flat += (c == '\n' || c == '\r' || c == '\t') ? ' ' : c;
  std::string_view cut = Utf8Prefix(flat, max);
  return cut.size() < flat.size() ? std::string(cut) + "…" : flat;
}

bool IsKeyLine(std::string_view line) {
  std::string low(line);
  std::transform(low.begin(), low.end(), low.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const char* word : {"error", "fail", "assert", "exception", "traceback", "panic", "fatal",
                           "passed", "not found", "denied", "limit exceeded", "killed"}) {
    if (low.find(word) != std::string::npos) return true;
  }
  return false;
}

// How a RunCommand call ended, from its result: "[exit code N]" (after a
// limit's diagnosis, if any), "[timed out ...]" or "[cancelled ...]".
struct CommandEnd {
  std::string how;  // "exit code 2", "timed out", ...
  bool passed = false;
};

CommandEnd EndOfCommand(const std::string& text, bool is_error) {
  CommandEnd e;
  if (auto p = text.find("[exit code "); p != std::string::npos) {
    size_t q = p + 11;
    size_t end = text.find(']', q);
    std::string code = end == std::string::npos ? "" : text.substr(q, end - q);
    e.how = "exit code " + code;
    e.passed = code == "0" && !is_error;
  } else if (text.find("[timed out") != std::string::npos) {
    e.how = "timed out (killed)";
  } else if (text.find("[cancelled") != std::string::npos) {
    e.how = "cancelled";
  } else {
    e.how = is_error ? "did not run" : "no exit code recorded";
  }
  return e;
}

// One command of the session: its runs, grouped by the exact command line.
struct CommandRuns {
  std::string command;
  int runs = 0;
  int failures = 0;
  CommandEnd last;
  std::string key_lines;  // of the last run
  size_t order = 0;       // ledger position of the last run
};

std::string ArgOf(const Json& args, const char* key) {
  if (args.is_object() && args.contains(key) && args[key].is_string()) {
    return args[key].get<std::string>();
  }
  return {};
}

std::string DescribeCommand(const CommandRuns& c) {
  std::string out = fmt::format("`{}` — {}", OneLine(c.command, kFallbackCommandBytes), c.last.how);
  if (c.runs > 1) {
    out += c.last.passed ? fmt::format(" (run {} times, {} failed before)", c.runs, c.failures)
                         : fmt::format(" (run {} times, {} failed)", c.runs, c.failures);
  }
  if (!c.key_lines.empty()) out += ": " + c.key_lines;
  return out;
}

// The function name and arguments of one archived tool call (OpenAI shape,
// or the flat one).
std::pair<std::string, Json> CallOf(const Json& call) {
  const Json& fn = call.contains("function") ? call["function"] : call;
  std::string name = fn.value("name", "");
  Json args = fn.contains("arguments") ? fn["arguments"] : Json::object();
  if (args.is_string()) args = Json::parse(args.get<std::string>(), nullptr, false);
  return {name, args.is_object() ? args : Json::object()};
}

}  // namespace

std::string KeyLines(const std::string& output, size_t max_lines) {
  std::vector<std::string_view> all, key;
  std::string_view rest(output);
  while (!rest.empty()) {
    size_t nl = rest.find('\n');
    std::string_view line = Trim(rest.substr(0, nl));
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    if (line.empty() || line.rfind("[exit code ", 0) == 0) continue;
    all.push_back(line);
    if (IsKeyLine(line)) key.push_back(line);
  }
  const std::vector<std::string_view>& pick = key.empty() ? all : key;
  size_t from = pick.size() > max_lines ? pick.size() - max_lines : 0;
  std::string out;
  for (size_t i = from; i < pick.size(); ++i) {
    out += (out.empty() ? "" : " | ") + OneLine(pick[i], kFallbackLineBytes);
  }
  return out;
}

Result<SessionMovements> ReadSessionMovements(Env& env, const std::string& messages_path,
                                              const std::string& job_id,
                                              const std::string& current) {
  SessionMovements out;
  std::string at;                            // the movement the conversation is in
  std::map<std::string, std::string> asked;  // transition asked for: next -> reason
  auto enter = [&](const std::string& next) {
    if (next.empty() || next == at) return;
    if (!at.empty()) {
      auto it = asked.find(next);
      if (it != asked.end()) {
        out.transitions.push_back(
            {fmt::format("moved from movement `{}` to `{}`", at, next),
             it->second.empty() ? "(the transition gave no reason)" : it->second});
      }
    }
    out.visited.push_back(next);
    at = next;
    asked.clear();
  };
  MAESTRO_RETURN_IF_ERROR(ForEachLine(env, messages_path, [&](std::string_view line, uint64_t) {
    // Most lines are other jobs' or carry neither a movement nor a
    // transition call: skipped without parsing (a tool result can be large).
    if (job_id.empty() || line.find(job_id) == std::string_view::npos) return true;
    if (line.find("\"movement\"") == std::string_view::npos &&
        line.find(tools::kTransition) == std::string_view::npos) {
      return true;
    }
    Json rec = Json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!rec.is_object() || rec.value("job_id", "") != job_id) return true;
    if (auto calls = rec.find("tool_calls"); calls != rec.end() && calls->is_array()) {
      for (const Json& c : *calls) {
        if (!c.is_object()) continue;
        auto [name, args] = CallOf(c);
        if (name != tools::kTransition) continue;
        asked[ArgOf(args, "next")] = OneLine(ArgOf(args, "reason"), 300);
      }
    }
    if (auto m = rec.find("movement"); m != rec.end() && m->is_string()) enter(*m);
    return true;
  }));
  if (!current.empty() && (out.visited.empty() || out.visited.back() != current)) {
    out.visited.push_back(current);
  }
  return out;
}

Result<HandoffDocument> FallbackHandoff(const FallbackFacts& f, const context::ToolStore& tools) {
  HandoffDocument d;
  d.spec_ref = f.spec_ref;
  std::map<std::string, std::string> files;  // workspace-relative path -> the tool that wrote it
  std::vector<CommandRuns> commands;
  std::map<std::string, size_t> command_index;
  std::vector<std::pair<size_t, std::string>> failures;  // ledger position, blocker
  std::vector<std::string> reads;
  std::map<std::string, int> ok_calls;
  size_t calls = 0;
  MAESTRO_RETURN_IF_ERROR(tools.ForEach([&](const context::ToolCallRecord& r) {
    const size_t order = calls++;
    const bool ok = r.status == "success";
    if (ok) ++ok_calls[r.tool];
    const std::string path = ArgOf(r.args, "path");
    // Every file the task wrote (the files check reads the whole ledger too).
    if (ok && context::IsFileWritingTool(r.tool) && !path.empty()) {
      if (std::string rel = WorkspaceRelativePath(path, f.workspace); !rel.empty()) {
        files[rel] = r.tool;
      }
    }
    if (r.job_id != f.job_id) return true;  // the rest are this session's facts
    const bool remote = r.tool == tools::kRunRemote;
    if ((r.tool == tools::kRunCommand || remote) && !ArgOf(r.args, "command").empty()) {
      const std::string& text = ok ? r.result : r.error;
      // A remote command names its host: the same words on two hosts are
      // two commands (RunRemote's result starts "[exit code N]" as well).
      const std::string command =
          remote ? fmt::format("{} on {}", ArgOf(r.args, "command"), ArgOf(r.args, "host"))
                 : ArgOf(r.args, "command");
      auto [it, fresh] = command_index.try_emplace(command, commands.size());
      if (fresh) {
        commands.emplace_back();
        commands.back().command = command;
      }
      CommandRuns& c = commands[it->second];
      c.last = EndOfCommand(text, !ok);
      ++c.runs;
      if (!c.last.passed) ++c.failures;
      c.key_lines = KeyLines(text);
      c.order = order;
      return true;
    }
    if (!ok) {
      std::string what = path.empty() ? r.tool : fmt::format("{} `{}`", r.tool, path);
      failures.emplace_back(
          order, fmt::format("{} failed: {}", what, OneLine(r.error, kFallbackErrorBytes)));
    } else if (r.tool == tools::kReadFile && !path.empty()) {
      std::string rel = WorkspaceRelativePath(path, f.workspace);
      if (!rel.empty() && std::find(reads.begin(), reads.end(), rel) == reads.end()) {
        reads.push_back(rel);
      }
    }
    return true;
  }));

  // completed: the movements left, the commands whose last run passed, the reads.
  const auto& visited = f.movements.visited;
  for (size_t i = 0; i + 1 < visited.size(); ++i) {
    d.completed.push_back(fmt::format("movement `{}`: left for `{}`", visited[i], visited[i + 1]));
  }
  std::sort(commands.begin(), commands.end(),
            [](const CommandRuns& a, const CommandRuns& b) { return a.order < b.order; });
  const size_t omitted =
      commands.size() > kFallbackMaxCommands ? commands.size() - kFallbackMaxCommands : 0;
  for (size_t i = omitted; i < commands.size(); ++i) {
    if (commands[i].last.passed) {
      d.completed.push_back("ran " + DescribeCommand(commands[i]));
    } else {
      failures.emplace_back(commands[i].order, "ran " + DescribeCommand(commands[i]));
    }
  }
  if (!reads.empty()) {
    std::vector<std::string> shown(
        reads.begin(),
        reads.begin() + static_cast<long>(std::min(reads.size(), kFallbackMaxReads)));
    d.completed.push_back(fmt::format(
        "read {}{}", fmt::join(shown, ", "),
        reads.size() > shown.size() ? fmt::format(" and {} more files", reads.size() - shown.size())
                                    : ""));
  }

  // in_progress: where the session stopped, and what the ledger holds.
  if (!visited.empty()) {
    d.in_progress.push_back(fmt::format(
        "movement `{}`: the session ended in it (its context was full and the agent wrote no "
        "handoff), so its work there is not known to be finished",
        visited.back()));
  }
  std::vector<std::string> counts;
  for (const auto& [tool, n] : ok_calls) counts.push_back(fmt::format("{} x{}", tool, n));
  d.in_progress.push_back(fmt::format(
      "Session ended without a handoff from the agent; the engine wrote this one from the tool "
      "ledger: {} calls ({}){}. Verify the state against the files and the spec.",
      calls, counts.empty() ? "none succeeded" : fmt::format("{}", fmt::join(counts, ", ")),
      omitted > 0 ? fmt::format("; {} earlier commands not listed", omitted) : ""));

  d.decisions = f.movements.transitions;

  std::stable_sort(failures.begin(), failures.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  size_t skip = failures.size() > kFallbackMaxBlockers ? failures.size() - kFallbackMaxBlockers : 0;
  for (size_t i = skip; i < failures.size(); ++i) d.blockers.push_back(failures[i].second);

  // files_changed: what the files check will compare, once each.
  for (const auto& p : f.git_changed) {
    if (std::string rel = WorkspaceRelativePath(p); !rel.empty()) files.try_emplace(rel, "");
  }
  for (const auto& [path, tool] : files) {
    if (d.files_changed.size() >= kFallbackMaxFiles) break;
    d.files_changed.push_back(path + " — " + (tool.empty() ? "changed (git)" : tool));
  }
  return d;
}

}  // namespace maestro::engine
