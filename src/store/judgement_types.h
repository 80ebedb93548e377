// The judgement rows (issue 21): lessons and missions.
//
// Lessons: what a Reflection task learned from an ended task,
// kept for later tasks of the same space (scope space) or of the same piece
// in that space (scope piece), which get them in their instruction
// (engine/job/reflection.h). A person can add, edit and delete them (API, UI).
// Plain data.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"

namespace maestro {

enum class LessonScope { kSpace, kPiece };

inline std::string_view LessonScopeName(LessonScope s) {
  return s == LessonScope::kPiece ? "piece" : "space";
}
inline std::optional<LessonScope> ParseLessonScope(std::string_view s) {
  if (s == "space") return LessonScope::kSpace;
  if (s == "piece") return LessonScope::kPiece;
  return std::nullopt;
}

struct Lesson {
  std::string id;
  std::string space;  // the tasks' space ("" = ephemeral workspaces)
  std::string piece;  // scope piece: the piece it applies to; scope space: ""
  LessonScope scope = LessonScope::kSpace;
  std::string lesson;
  std::vector<std::string> evidence;  // the task ids it was learned from
  std::string source_task_id;         // the Reflection task that wrote it; "" = a person
  TimeMs created_at = 0;
  TimeMs updated_at = 0;
};

// A mission: a long-lived goal of a team ("ship the v2 API") with its own
// notes; tasks that belong to it (Task::mission_id) get its title, notes and
// the newest results of its other tasks in their dynamic context
// (engine/prompt DynamicContext::mission), never in the system text. Owned
// and seen like a task.
struct Mission {
  std::string id;
  std::string title;
  std::string notes;
  std::string space;  // "" = any
  std::string owner;
  std::string visibility = "private";  // private | shared
  TimeMs created_at = 0;
  TimeMs updated_at = 0;
};

}  // namespace maestro
