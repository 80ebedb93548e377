// Which of the five prompt paths a job takes (seed 000 §3.2) and the task
// instruction its final user message carries.
//
//   continued_from_job_id whose job handed off    handoff continuation (first
//     (a `handoff` comment of THAT job)          run only; a resumed run
//                                                replays as a follow-up)
//   continued_from_job_id + a `handoff` comment   Continue: same piece as the
//                                                 previous job -> same-piece,
//                                                 else cross-piece
//   continued_from_job_id, no handoff             follow-up (comment / ASK
//                                                 answer); the comments of
//                                                 the job are the instruction
//   a transcript but no continued_from            the same job again (resume
//                                                 after a park, a retry):
//                                                 follow-up replay
//   otherwise                                     new job
//
// Thread safety: reads the store and the file system; no state.
#pragma once

#include <string>

#include "engine/prompt_paths.h"
#include "store/store.h"

namespace maestro::engine {

struct JobPromptPlan {
  PromptPath path = PromptPath::kNewJob;
  std::string instruction;
  // The first run of a continuation queued by a handoff (seed 004): the
  // conversation is the system message + the handoff facts + the task
  // instruction (SeedHandoffContinuation), nothing replayed.
  bool handoff_continuation = false;
};

Result<JobPromptPlan> PlanJobPrompt(Store& store, const Task& task, const Job& job,
                                    const std::string& transcript_path);

}  // namespace maestro::engine
