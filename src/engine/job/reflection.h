// Reflection and lessons (seed 000's Reflection job path; issue 21).
//
// After a task's job ends (succeeded or failed — configurable with
// `reflection.on: off|failure|success|always`), the executor creates a
// Reflection task: piece `reflection` (pieces/reflection.yaml), the same
// space, owner and visibility, task_source "reflection:<task id>", and an
// instruction holding the ended task's facts — its instruction, how it
// ended, the tool errors and policy firings from its events, and the end of
// its transcript. Its only tool of consequence is RecordLesson
// (knowledge/knowledge_tools.h), bound to that task's space and piece. The
// spawn key "reflection/<job id>" makes it once per ended job, whatever
// retries or crashes happen around it. A Reflection task is never itself
// reflected on.
//
// Later jobs get, in their final user message's instruction (never the
// system text, so the cached prefix stays), the newest lessons of their
// space and piece and the piece's checklist (InstructionAdditions).
//
// Thread safety: functions over the Store and the Env.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/env.h"
#include "engine/piece/piece.h"
#include "store/store.h"

namespace maestro::engine {

inline constexpr char kReflectionPiece[] = "reflection";

// Whether a task whose job ended `end` is reflected on under `mode`.
bool ShouldReflect(const std::string& mode, const Task& task, JobStatus end);

// The task a Reflection task reviews (its task_source), or nullopt.
std::optional<std::string> ReflectedTaskId(const Task& task);

// The end of a transcript as plain lines ("[role] text", tool calls by name
// and arguments), each capped, the whole at most `max_bytes` (oldest cut).
std::string TranscriptExcerpt(Env& env, const std::string& transcript_path, size_t max_bytes);

// Creates the Reflection task of `task`'s job `job` (idempotent).
// `reason` and `result`: the run's (PieceRunResult).
Result<Store::CreatedTask> StartReflection(Store& store, const Task& task, const Job& job,
                                           JobStatus end, const std::string& reason,
                                           const std::string& result, const std::string& excerpt);

// "## Lessons from earlier tasks" and "## Checklist" sections ("" when there
// is neither), for the end of a job's instruction.
std::string InstructionAdditions(const std::vector<Lesson>& lessons, const Piece& piece);

// The lessons a job of `piece` in `space` is given: the newest few.
std::vector<Lesson> LessonsFor(LessonRecords& store, const std::string& space,
                               const std::string& piece);

}  // namespace maestro::engine
