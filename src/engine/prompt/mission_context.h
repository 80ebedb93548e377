// The mission in the prompt (issue 21): a task that belongs to a mission
// (Task::mission_id, store/judgement_types.h) gets, in its dynamic context —
// the final user message, never the system text —, the mission's title and
// notes and the newest results of the mission's other tasks, so a series of
// tasks works toward one goal without a person restating it.
//
// Thread safety: reads the store.
#pragma once

#include <string>

#include "store/store.h"

namespace maestro::engine {

// "" when the task has no mission or it is gone (a deleted mission is no
// context, not an error).
std::string MissionContextText(Store& store, const Task& task);

}  // namespace maestro::engine
