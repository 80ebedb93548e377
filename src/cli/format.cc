#include "cli/format.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/utf8.h"

namespace maestro::cli {
namespace {

std::string Str(const Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

int64_t Int(const Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
}

// Counts characters, not bytes, so UTF-8 titles line up.
size_t Width(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

std::string Indented(const std::string& text, const std::string& indent) {
  std::string out;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    std::string line = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    out += indent + line + "\n";
    if (nl == std::string::npos) break;
    pos = nl + 1;
  }
  return out;
}

std::string ShortId(const std::string& id) { return id.substr(0, 8); }

// The newest agent question of `job_id` in the comment list, or "".
std::string QuestionOf(const Json& comments, const std::string& job_id) {
  std::string q;
  if (!comments.is_array()) return q;
  for (const Json& c : comments) {
    if (Str(c, "kind") == "question" && (job_id.empty() || Str(c, "job_id") == job_id)) {
      q = Str(c, "body");
    }
  }
  return q;
}

}  // namespace

std::string RelativeAge(int64_t now_ms, int64_t then_ms) {
  if (then_ms <= 0) return "-";
  int64_t s = (now_ms - then_ms) / 1000;
  if (s < 5) return "just now";
  if (s < 60) return fmt::format("{}s ago", s);
  if (s < 3600) return fmt::format("{}m ago", s / 60);
  if (s < 86400) return fmt::format("{}h ago", s / 3600);
  return fmt::format("{}d ago", s / 86400);
}

std::string Table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths;
  for (const auto& r : rows) {
    if (widths.size() < r.size()) widths.resize(r.size(), 0);
    for (size_t i = 0; i < r.size(); ++i) widths[i] = std::max(widths[i], Width(r[i]));
  }
  std::string out;
  for (const auto& r : rows) {
    std::string line;
    for (size_t i = 0; i < r.size(); ++i) {
      line += r[i];
      if (i + 1 < r.size()) line += std::string(widths[i] - Width(r[i]) + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string TaskTitle(const Json& task, size_t max_bytes) {
  std::string t = Str(task, "title");
  if (t.empty()) {
    t = Str(task, "instruction");
    t = t.substr(0, t.find('\n'));
  }
  if (t.size() <= max_bytes) return t;
  return std::string(Utf8Prefix(t, max_bytes)) + "…";
}

std::string TaskListText(const Json& list, int64_t now_ms) {
  const Json tasks = list.value("tasks", Json::array());
  if (tasks.empty()) return "no tasks\n";
  std::vector<std::vector<std::string>> rows = {{"ID", "STATUS", "PIECE", "AGE", "TITLE"}};
  for (const Json& t : tasks) {
    rows.push_back({ShortId(Str(t, "id")), Str(t, "status"), Str(t, "piece"),
                    RelativeAge(now_ms, Int(t, "created_at")), TaskTitle(t)});
  }
  return Table(rows);
}

std::string AnswerCommand(const std::string& task_id) {
  return fmt::format("maestro task comment {} \"<answer>\"", task_id);
}

std::string DecideCommands(const std::string& task_id, const Json& request,
                           const std::string& indent) {
  const std::string kind = Str(request, "kind").empty() ? "tool" : Str(request, "kind");
  const std::string id = Str(request, "id");
  std::string out =
      fmt::format("{}approve: maestro task approve {} {} --kind {}\n", indent, task_id, id, kind);
  if (kind == "tool") {
    out += fmt::format(
        "{}  (for the whole task: maestro task approve {} {} --kind tool --scope "
        "task)\n",
        indent, task_id, id);
  }
  out += fmt::format("{}deny:    maestro task deny {} {} --kind {}\n", indent, task_id, id, kind);
  return out;
}

std::string TaskShowText(const Json& detail, const Json& comments, int64_t now_ms) {
  const Json task = detail.value("task", Json::object());
  const std::string task_id = Str(task, "id");
  std::string out = TaskTitle(task, 200) + "\n";
  std::string space = Str(task, "space");
  out += Table({{"  id", task_id},
                {"  status", Str(task, "status")},
                {"  piece", Str(task, "piece")},
                {"  space", space.empty() ? "-" : space},
                {"  created", RelativeAge(now_ms, Int(task, "created_at"))}});
  if (!Str(task, "error_message").empty()) out += "  error    " + Str(task, "error_message") + "\n";
  const Json jobs = detail.value("jobs", Json::array());
  if (!jobs.empty()) {
    out += "jobs (oldest first):\n";
    std::vector<std::vector<std::string>> rows;
    for (const Json& j : jobs) {
      std::string note;
      if (!Str(j, "wait_reason").empty() && Str(j, "status") == "waiting_human") {
        note = "waits for: " + Str(j, "wait_reason");
      }
      if (!Str(j, "error_message").empty() && Str(j, "status") != "succeeded") {
        note += (note.empty() ? "" : "; ") + std::string("error: ") + Str(j, "error_message");
      }
      rows.push_back({"  " + ShortId(Str(j, "id")), Str(j, "status"),
                      fmt::format("attempt {}", Int(j, "attempt")),
                      RelativeAge(now_ms, Int(j, "created_at")), note});
    }
    out += Table(rows);
  }
  const Json latest = detail.value("latest_job", Json());
  if (latest.is_object() && Str(latest, "status") == "waiting_human") {
    std::string q = QuestionOf(comments, Str(latest, "id"));
    if (!q.empty()) {
      out += "question:\n" + Indented(q, "  ");
      out += "  answer: " + AnswerCommand(task_id) + "\n";
    }
  }
  const Json pending = detail.value("pending_requests", Json::array());
  if (!pending.empty()) {
    out += "pending requests:\n";
    for (const Json& r : pending) {
      std::string reason = Str(r, "reason");
      out += fmt::format("  {} request {}: {}{}\n", Str(r, "kind"), Str(r, "id"), Str(r, "name"),
                         reason.empty() ? "" : " — " + reason);
      out += DecideCommands(task_id, r, "    ");
    }
  }
  if (latest.is_object() && !Str(latest, "result").empty()) {
    out += "result:\n" + Indented(Str(latest, "result"), "  ");
  }
  return out;
}

std::string ToolCallLine(const std::string& name, const std::string& arguments, bool is_error) {
  std::string args = arguments;
  for (char& ch : args) {
    if (ch == '\n' || ch == '\r') ch = ' ';
  }
  if (args.size() > 100) args = std::string(Utf8Prefix(args, 97)) + "...";
  return fmt::format("[tool {}]{}{}", name, args.empty() ? "" : " " + args,
                     is_error ? " (error)" : "");
}

}  // namespace maestro::cli
