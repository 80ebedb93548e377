// Which of the five prompt paths a job's run takes (seed 000 §3.2) and the
// task instruction its final user message carries.
//
//   the newest thread was started by this job    the same job again (retry,
//     (it ran before: ran_before)                resume after a park, crash
//                                                recovery): follow-up replay
//                                                with a resume note
//   continued_from_job_id whose job handed off    handoff continuation
//     to this job                                (seed 004)
//   continued_from_job_id + a `handoff` comment   Continue: same piece as the
//                                                 previous job -> same-piece,
//                                                 else cross-piece
//   continued_from_job_id, no handoff             follow-up (comment / ASK
//                                                 answer)
//   otherwise                                     new job (a transcript, if
//                                                 any, is replayed)
//
// On every path the job's undelivered user comments (comment_delivery.h) are
// appended to the instruction, each once, tagged with its id; the caller
// acknowledges `delivered` after the conversation is written.
//
// Thread safety: reads the store and the file system; no state.
#pragma once

#include <string>
#include <vector>

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
  // The comments `instruction` delivers (to acknowledge once written).
  std::vector<Comment> delivered;
};

// `ran_before`: the task's newest conversation thread belongs to `job`
// (MessageStore::thread_job_id()); `movement`: the movement the run starts
// in, named in a resume note ("" = none named).
Result<JobPromptPlan> PlanJobPrompt(Store& store, const Task& task, const Job& job,
                                    const std::string& transcript_path, bool ran_before,
                                    const std::string& movement = "");

}  // namespace maestro::engine
