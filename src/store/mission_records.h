// MissionRecords: the missions role of the Store (store/store.h; issue 21,
// sql_judgement.cc) — a long-lived goal whose title, notes and the newest
// results of its tasks go into each of its tasks' context (the type:
// store/judgement_types.h).
//
// Who uses it: the API's mission routes (api/); the prompt's mission context
// (engine/prompt/mission_context.h).
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
#include "store/types.h"
#include "store/unsupported.h"

namespace maestro {

class MissionRecords {
 public:
  virtual ~MissionRecords() = default;

  // ---- missions (issue 21; sql_judgement.cc). Assigns id and times;
  // kInvalidArgument naming "title" when it is empty.
  virtual Result<Mission> CreateMission(const Mission& /*m*/) { return NotSupportedByStore(); }
  // kNotFound "mission <id> not found".
  virtual Result<Mission> GetMission(const std::string& /*id*/) { return NotSupportedByStore(); }
  // Oldest first; `visible_to` as ScheduleRecords::ListSchedules.
  virtual Result<std::vector<Mission>> ListMissions(
      const std::optional<std::string>& /*visible_to*/) {
    return NotSupportedByStore();
  }
  // Replaces title and notes. kNotFound when absent.
  virtual Result<Mission> UpdateMission(const Mission& /*m*/) { return NotSupportedByStore(); }
  // The mission's tasks, newest first.
  virtual Result<std::vector<Task>> ListMissionTasks(const std::string& /*mission_id*/,
                                                     int /*limit*/) {
    return NotSupportedByStore();
  }
};

}  // namespace maestro
