// LessonRecords: the lessons role of the Store (store/store.h; issue 21,
// sql_judgement.cc) — what reflection and people learned about a space or a
// piece, given to its next tasks (the type: store/judgement_types.h).
//
// Who uses it: the record_lesson tool (knowledge/knowledge_tools.h) and the
// engine's reflection add and read them (engine/job/reflection.h); the API's
// Lessons routes keep them (api/).
//
// Not pure, so other Store implementations (test fakes) need not provide
// them; the defaults answer kUnimplemented.
//
// Thread safety: every method may be called from any thread concurrently.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "store/judgement_types.h"
#include "store/unsupported.h"

namespace maestro {

class LessonRecords {
 public:
  virtual ~LessonRecords() = default;

  // ---- lessons (issue 21; sql_judgement.cc)
  // Assigns id and times. kInvalidArgument naming the field for an empty
  // lesson or a piece-scoped one without a piece.
  virtual Result<Lesson> AddLesson(const Lesson& /*l*/) { return NotSupportedByStore(); }
  // kNotFound "lesson <id> not found".
  virtual Result<Lesson> GetLesson(const std::string& /*id*/) { return NotSupportedByStore(); }
  // The lessons of `space`, newest first: with `piece` set, the space-scoped
  // ones and those scoped to that piece (what a task of it is given);
  // unset, all of them.
  virtual Result<std::vector<Lesson>> ListLessons(const std::string& /*space*/,
                                                  const std::optional<std::string>& /*piece*/,
                                                  int /*limit*/) {
    return NotSupportedByStore();
  }
  // Every space's lessons, newest first (the Lessons page).
  virtual Result<std::vector<Lesson>> ListAllLessons(int /*limit*/) {
    return NotSupportedByStore();
  }
  // Replaces lesson, scope, piece and evidence of `l.id`. kNotFound when absent.
  virtual Result<Lesson> UpdateLesson(const Lesson& /*l*/) { return NotSupportedByStore(); }
  virtual Status DeleteLesson(const std::string& /*id*/) { return NotSupportedByStore(); }
};

}  // namespace maestro
