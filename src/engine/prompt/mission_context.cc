#include "engine/prompt/mission_context.h"

#include <fmt/format.h>

#include "core/utf8.h"

namespace maestro::engine {

namespace {

constexpr int kRecentTasks = 5;
constexpr size_t kResultCap = 400;
constexpr size_t kNotesCap = 4000;

// The task's newest result comment, one line.
std::string ResultOf(Store& store, const Task& t) {
  auto comments = store.ListComments(t.id);
  if (!comments.ok()) return "";
  for (auto it = comments->rbegin(); it != comments->rend(); ++it) {
    if (it->kind != CommentKind::kResult) continue;
    std::string r(Utf8Prefix(it->body, kResultCap));
    for (char& c : r) {
      if (c == '\n' || c == '\r') c = ' ';
    }
    return r.size() < it->body.size() ? r + " …" : r;
  }
  return "";
}

}  // namespace

std::string MissionContextText(Store& store, const Task& task) {
  if (task.mission_id.empty()) return "";
  auto m = store.GetMission(task.mission_id);
  if (!m.ok()) return "";
  std::string out = m->title;
  if (!m->notes.empty()) out += "\n" + std::string(Utf8Prefix(m->notes, kNotesCap));
  auto tasks = store.ListMissionTasks(m->id, kRecentTasks + 1);
  if (!tasks.ok()) return out;
  std::string recent;
  int n = 0;
  for (const Task& t : *tasks) {
    if (t.id == task.id || n >= kRecentTasks) continue;
    ++n;
    std::string result = ResultOf(store, t);
    recent += fmt::format("- {} ({}){}\n", t.title, JobStatusName(t.status),
                          result.empty() ? "" : ": " + result);
  }
  if (!recent.empty()) out += "\n\nRecent tasks of this mission (newest first):\n" + recent;
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

}  // namespace maestro::engine
