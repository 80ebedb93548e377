// BrowserCallRecords: the store-routed live view of BrowseWeb (issue 48
// item 2; sql/sql_browser_calls.cc) — how an API process reaches a job's
// browser that lives in another process (`serve --workers 0` + `maestro
// worker`), through the database both already use: no listening port on a
// worker, no new credential.
//
// Two tables (shared schema change 13):
//   browser_holders: which worker process holds a job's open browser — the
//     worker id that ran the job (Job::worker_id, "host:pid:wN") and when the
//     holder last said so. The holder's BrowserCallServicer
//     (browser/browser_call_servicer.h) refreshes its rows every second while
//     it has a browser open and drops them when it closes one; a row not seen
//     for a few seconds is a holder gone.
//   browser_calls: one screenshot/input/done/release asked of the holder —
//     addressed to its worker id, answered by it (PNG bytes as base64), then
//     read and deleted by the asking API process. Bounded: every AddBrowserCall
//     deletes rows answered more than 60 s ago and pending ones older than 30 s,
//     and a job has at most `max_pending` calls pending.
//
// Trust: the API checks the caller may see the job BEFORE it writes a call;
// the servicer runs only calls addressed to its own worker id for jobs whose
// browser it holds, and parses each call's request again (untrusted row).
//
// The pin (ResumeBrowserLogin/ClearBrowserPin): a login handed over through
// the live view resumes the job on the holder (jobs.required_worker) so the
// logged-in page goes on in the same Chromium; the API clears the pin once the
// job is claimed, or after releasing the holder's browser when it was not.
//
// Not pure, so other Store implementations (test fakes) need not provide
// them; the defaults answer kUnimplemented.
//
// Thread safety: every method may be called from any thread concurrently.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "store/types.h"
#include "store/unsupported.h"

namespace maestro {

struct BrowserHolder {
  std::string job_id;
  std::string worker_id;  // Job::worker_id of the run that opened the browser
  TimeMs seen_at = 0;
};

struct BrowserCall {
  std::string id;
  std::string job_id;
  std::string worker_id;  // the holder it is addressed to
  std::string kind;       // screenshot | click | text | key | done | release
  std::string request;    // JSON: the validated input (browser/live_input.h)
  std::string status;     // pending | done | failed
  std::string answer;     // done: PNG bytes (screenshot), else ""
  int error_code = 0;     // failed: a StatusCode
  std::string error;      // failed: the message
  std::string error_field;
  TimeMs created_at = 0;
  TimeMs answered_at = 0;
};

class BrowserCallRecords {
 public:
  virtual ~BrowserCallRecords() = default;

  // The holder says it has these jobs' browsers open now: rows upserted
  // with seen_at = now (a job held by another worker id before moves here).
  virtual Status PutBrowserHolders(const std::vector<BrowserHolder>& /*held*/) {
    return NotSupportedByStore();
  }
  // The holder closed the job's browser: its row goes (only its own).
  virtual Status DropBrowserHolder(const std::string& /*job_id*/,
                                   const std::string& /*worker_id*/) {
    return NotSupportedByStore();
  }
  // The job's holder row; kNotFound when there is none. Whether it is still
  // alive is the caller's (seen_at against its clock).
  virtual Result<BrowserHolder> GetBrowserHolder(const std::string& /*job_id*/) {
    return NotSupportedByStore();
  }

  // Adds a pending call (id, status, created_at assigned; job_id, worker_id,
  // kind required: kInvalidArgument naming the field) after deleting old
  // rows (answered > 60 s, pending > 30 s ago); kResourceExhausted when the
  // job already has `max_pending` calls pending.
  virtual Result<BrowserCall> AddBrowserCall(const BrowserCall& /*c*/, int /*max_pending*/) {
    return NotSupportedByStore();
  }
  // The call; kNotFound when it is gone.
  virtual Result<BrowserCall> GetBrowserCall(const std::string& /*id*/) {
    return NotSupportedByStore();
  }
  // The job's calls pending for `worker_id`, oldest first, at most `limit`.
  virtual Result<std::vector<BrowserCall>> PendingBrowserCalls(const std::string& /*job_id*/,
                                                               const std::string& /*worker_id*/,
                                                               int /*limit*/) {
    return NotSupportedByStore();
  }
  // The holder's answer: `st` ok → done with `answer`, else failed with its
  // code, message and field. Only a pending call addressed to `worker_id`
  // changes; false when none did (gone, abandoned, answered, not ours).
  virtual Result<bool> AnswerBrowserCall(const std::string& /*id*/,
                                         const std::string& /*worker_id*/, const Status& /*st*/,
                                         const std::string& /*answer*/) {
    return NotSupportedByStore();
  }
  // The asker is done with the call (read, or gave up): it is deleted.
  virtual Status DeleteBrowserCall(const std::string& /*id*/) { return NotSupportedByStore(); }

  // ResumeParkedJob (same transition, events and wake-ups) that also pins
  // the job to `worker_id` ("" = no pin); kConflict unless it is parked.
  virtual Status ResumeBrowserLogin(const std::string& /*job_id*/,
                                    const std::string& /*worker_id*/) {
    return NotSupportedByStore();
  }
  // Clears the job's pin if it is still `worker_id`.
  virtual Status ClearBrowserPin(const std::string& /*job_id*/, const std::string& /*worker_id*/) {
    return NotSupportedByStore();
  }
  // Unpins every queued job pinned to a holder that has not refreshed its
  // row for `gone_ms` and that has waited that long itself (an API process
  // stopped during Done, then the holder died: nobody else would ever claim
  // it). The lease sweeper calls it; returns how many were unpinned.
  virtual Result<int> UnpinOrphanedBrowserLogins(TimeMs /*gone_ms*/) {
    return NotSupportedByStore();
  }
};

}  // namespace maestro
