#include "engine/job/reflection.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <deque>
#include <map>

#include "core/utf8.h"

namespace maestro::engine {

namespace {

constexpr char kSourcePrefix[] = "reflection:";
constexpr int kLessonsPerJob = 10;
constexpr size_t kLineCap = 600;

std::string Capped(std::string_view s, size_t cap) {
  if (s.size() <= cap) return std::string(s);
  return std::string(Utf8Prefix(s, cap)) + " …";
}

std::string ContentText(const Json& content) {
  if (content.is_string()) return content.get<std::string>();
  std::string out;
  if (content.is_array()) {
    for (const Json& p : content) {
      if (p.is_object() && p.value("type", "") == "text") out += p.value("text", "");
    }
  }
  return out;
}

// The facts of the task's events a reviewer needs: failing tool calls and
// policy firings (counts by tool / rule).
std::string EventFacts(Store& store, const std::string& task_id) {
  auto events = store.ListEvents(task_id, "", 5000);
  if (!events.ok()) return "";
  std::map<std::string, int> errors, policies;
  for (const Event& e : *events) {
    if (e.type == "tool.call" && e.payload.value("is_error", false)) {
      ++errors[e.payload.value("tool", "?")];
    } else if (e.type == "policy.fired") {
      ++policies[e.payload.value("rule", "?") + " (" + e.payload.value("decision", "?") + ")"];
    }
  }
  std::string out;
  for (const auto& [tool, n] : errors) out += fmt::format("- {} failed {} time(s)\n", tool, n);
  for (const auto& [rule, n] : policies)
    out += fmt::format("- policy rule {} fired {} time(s)\n", rule, n);
  return out;
}

}  // namespace

bool ShouldReflect(const std::string& mode, const Task& task, JobStatus end) {
  if (mode == "off" || mode.empty()) return false;
  if (task.piece == kReflectionPiece || ReflectedTaskId(task)) return false;
  if (end == JobStatus::kFailed) return mode == "failure" || mode == "always";
  if (end == JobStatus::kSucceeded) return mode == "success" || mode == "always";
  return false;
}

std::optional<std::string> ReflectedTaskId(const Task& task) {
  if (task.task_source.rfind(kSourcePrefix, 0) != 0) return std::nullopt;
  return task.task_source.substr(sizeof(kSourcePrefix) - 1);
}

std::string TranscriptExcerpt(Env& env, const std::string& transcript_path, size_t max_bytes) {
  auto text = ReadFileToString(env, transcript_path);
  if (!text.ok()) return "";
  std::deque<std::string> lines;
  size_t total = 0;
  size_t pos = 0;
  while (pos < text->size()) {
    size_t nl = text->find('\n', pos);
    if (nl == std::string::npos) nl = text->size();
    Json m = Json::parse(std::string_view(*text).substr(pos, nl - pos), nullptr, false);
    pos = nl + 1;
    if (!m.is_object()) continue;
    const std::string role = m.value("role", "?");
    if (role == "system") continue;  // the piece's text: the same for every task
    std::string line =
        "[" + role + "] " + Capped(ContentText(m.value("content", Json())), kLineCap);
    if (m.contains("tool_calls") && m["tool_calls"].is_array()) {
      for (const Json& c : m["tool_calls"]) {
        const Json& f = c.value("function", Json::object());
        line +=
            fmt::format(" → {}({})", f.value("name", "?"), Capped(f.value("arguments", ""), 200));
      }
    }
    total += line.size() + 1;
    lines.push_back(std::move(line));
    while (total > max_bytes && lines.size() > 1) {
      total -= lines.front().size() + 1;
      lines.pop_front();
    }
  }
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

Result<Store::CreatedTask> StartReflection(Store& store, const Task& task, const Job& job,
                                           JobStatus end, const std::string& reason,
                                           const std::string& result, const std::string& excerpt) {
  NewTask r;
  r.title = Capped("Reflect on: " + task.title, 120);
  r.piece = kReflectionPiece;
  r.space = task.space;
  r.owner = task.owner;
  r.visibility = task.visibility;
  r.task_source = kSourcePrefix + task.id;
  r.spawn_key = "reflection/" + job.id;
  r.priority = kMinPriority;  // after the work it reflects on
  std::string facts = EventFacts(store, task.id);
  r.instruction = fmt::format(
      "Review task {} (piece {}), which ended {}{}.\n\n"
      "## Its instruction\n{}\n\n"
      "{}"
      "{}"
      "## The end of its conversation (oldest first)\n{}\n"
      "Record with RecordLesson each lesson that a later task in this space should follow (at "
      "most 3; none when nothing generalizes). Then call `complete` with a one-line summary.",
      task.id, task.piece, JobStatusName(end), reason.empty() ? "" : ": " + Capped(reason, 500),
      Capped(task.instruction, 2000),
      result.empty() ? "" : "## Its result\n" + Capped(result, 2000) + "\n\n",
      facts.empty() ? "" : "## From its events\n" + facts + "\n",
      excerpt.empty() ? "(no transcript)\n" : excerpt);
  return store.CreateTask(r);
}

std::vector<Lesson> LessonsFor(LessonRecords& store, const std::string& space,
                               const std::string& piece) {
  if (piece == kReflectionPiece) return {};
  auto lessons = store.ListLessons(space, piece, kLessonsPerJob);
  if (!lessons.ok()) {
    // Best effort: a job without its lessons still runs.
    if (lessons.status().code() != StatusCode::kUnimplemented) {
      spdlog::warn("lessons of space '{}': {}", space, lessons.status().ToString());
    }
    return {};
  }
  return std::move(lessons).value();
}

std::string InstructionAdditions(const std::vector<Lesson>& lessons, const Piece& piece) {
  std::string out;
  if (!lessons.empty()) {
    out += "\n\n## Lessons from earlier tasks\n";
    // Oldest first: the list reads in the order the lessons were learned.
    for (auto it = lessons.rbegin(); it != lessons.rend(); ++it) {
      out += "- " + Capped(it->lesson, 1000) + "\n";
    }
  }
  if (!piece.checklist.empty()) {
    out += "\n\n## Checklist (check each before you complete)\n";
    for (const std::string& c : piece.checklist) out += "- [ ] " + c + "\n";
  }
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

}  // namespace maestro::engine
