// CaptchaPool: the CAPTCHA pool role of the Store (store/store.h; seed 001:
// WAITING_HUMAN_BROWSER, wait_reason captcha). Jobs of one space that hit
// the same CAPTCHA screen wait on it together; a person solves it once and
// every one of them resumes.
//
// Who uses it: the engine records the screen a job waits on (engine/); the
// captcha-pool route resumes the jobs of a solved screen (api/routes_captcha.cc).
//
// Thread safety: every method may be called from any thread concurrently.
#pragma once

#include <optional>
#include <string>

#include "core/status.h"

namespace maestro {

class CaptchaPool {
 public:
  virtual ~CaptchaPool() = default;

  // Records the (space, screen) the job is about to wait on: the engine
  // calls it while the job still runs, just before it parks with wait_reason
  // 'captcha'. ("", "") clears both. kNotFound for an unknown job.
  virtual Status SetCaptchaWait(const std::string& job_id, const std::string& space_id,
                                const std::string& screen) = 0;
  // In one transaction, requeues (as ResumeParkedJob: same events, same task
  // status mirror) every job waiting_human with wait_reason 'captcha' on
  // exactly (space_id, screen), clearing its captcha_space_id and keeping
  // its captcha_screen: the resumed job sees its screen solved by
  // captcha_space_id == "" && captcha_screen == screen. Returns how many were
  // requeued (0 is not an error). An empty argument is kInvalidArgument
  // naming it ("space_id" | "screen").
  // `resolved_by` (issue 44; nullopt: every job, for the engine and tools)
  // keeps a user to their own: a job of a task in a space only when its task
  // is visible to them (shared, unowned or theirs); a job of a task without
  // a space — the owner's personal pool, whatever captcha_space_id says —
  // only when the task is theirs (or unowned). Another user's private wait
  // is never requeued.
  virtual Result<int> ResumeCaptchaJobs(const std::string& space_id, const std::string& screen,
                                        const std::optional<std::string>& resolved_by) = 0;
};

}  // namespace maestro
