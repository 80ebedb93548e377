// ToolCards: a task's tool ledger (tools.jsonl, context/ledger.h) folded into
// one card per logical call, for GET /api/local/tasks/:id/tool-calls — the
// web UI's tool cards after a restart, when the live job stream no longer
// has them.
//
// Folding rules, in ledger order (a card is placed where its call first
// appears):
//   started              → a card, `running`
//   finished / error     → that card ends `finished` / `error` (a card is
//                          made when there was no `started`: park tools)
//   reconciled           → `reconciled`, its note as the result
//   parked               → a park tool call that parked its job: `waiting`
//                          while the job is still parked, else `finished`
//                          with the answer it gave the model
// A park call's re-issue after the resume (the same job, the same tool and
// arguments — for WaitSubTask the same tool — recorded under a new call id)
// is folded into the park's card: its end is the card's end and the wait is
// part of the card's duration. Lines that are not ledger records (torn, or
// the pre-ledger one-line-per-call shape without an `event`) never reach
// the fold: ToolLedger::Read skips them.
//
// Thread safety: a pure function.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "context/ledger.h"
#include "core/clock.h"
#include "core/json.h"

namespace maestro::tools {

struct ToolCard {
  std::string job_id;
  std::string call_id;  // the first call id of the logical call
  std::string tool;
  Json args = Json::object();
  bool read_only = false;
  std::string status;  // running | finished | error | waiting | reconciled
  std::string result;  // the first kLedgerResultBytes of the result
  int64_t duration_ms = 0;
  TimeMs started_at = 0;
  std::optional<TimeMs> finished_at;
};

// `job_parked(job_id)`: whether that job is parked now (waiting_human or
// waiting_subtasks).
std::vector<ToolCard> FoldToolCards(const std::vector<LedgerRecord>& records,
                                    const std::function<bool(const std::string&)>& job_parked);

}  // namespace maestro::tools
