// The tools that reach the agent's knowledge beyond its task (issue 21):
//
//   ReadSkill {name}                         a skill's SKILL.md body (skills.h)
//   Memory {action: read|append, topic, text} the space's or owner's notes (memory.h)
//   RecordLesson {lesson, scope, evidence}   a lesson for later tasks; offered
//                                            only to Reflection tasks
//                                            (engine/job/reflection.h)
//
// They are registered per job into the job's copy of the tool registry
// (like its MCP tools), each bound to what the job may reach — its space's
// memory, the skills found at its start, the space and piece a lesson is
// about — and offered only when there is something to reach, so a space
// without skills or memory sees the same tools array as before.
//
// Thread safety: the handlers capture values; ReadSkill is read-only and
// may run in parallel with other reads.
#pragma once

#include <string>
#include <vector>

#include "knowledge/skills.h"
#include "store/store.h"
#include "tools/registry.h"

namespace maestro::knowledge {

inline constexpr char kReadSkill[] = "ReadSkill";
inline constexpr char kMemory[] = "Memory";
inline constexpr char kRecordLesson[] = "RecordLesson";

// The knowledge tools are the engine's, like WriteHandoff: offered in every
// movement whatever its allowed_tools list (engine/piece/piece_tools.h).
inline bool IsKnowledgeTool(const std::string& name) {
  return name == kReadSkill || name == kMemory || name == kRecordLesson;
}

// Registers ReadSkill over `skills` (which must be non-empty).
Status RegisterReadSkill(tools::ToolRegistry& registry, std::vector<Skill> skills, Env* env);

// Registers Memory over `memory_dir`: the task's space's, or its owner's
// for a task without a space (memory.h MemoryDir) — never another user's.
Status RegisterMemory(tools::ToolRegistry& registry, std::string memory_dir, Env* env,
                      const Clock* clock);

// What a RecordLesson call writes about: the reflected-on task.
struct LessonTarget {
  std::string space;
  std::string piece;
  std::string task_id;         // the task reflected on: always in the evidence
  std::string source_task_id;  // the Reflection task
};
Status RegisterRecordLesson(tools::ToolRegistry& registry, LessonRecords* store,
                            LessonTarget target);

}  // namespace maestro::knowledge
