#include "api/tool_cards.h"

#include <algorithm>
#include <map>
#include <utility>

#include "core/utf8.h"
#include "tools/tool_names.h"

namespace maestro::tools {

namespace {

bool SameLogicalCall(const ToolCard& park, const LedgerRecord& r) {
  if (park.job_id != r.key.job_id || park.tool != r.tool) return false;
  if (r.tool == kWaitSubTask) return true;  // its `reason` is free text
  const Json args = r.args.is_object() ? r.args : Json::object();
  return park.args == args;
}

}  // namespace

std::vector<ToolCard> FoldToolCards(const std::vector<LedgerRecord>& records,
                                    const std::function<bool(const std::string&)>& job_parked) {
  std::vector<ToolCard> cards;
  std::map<std::pair<std::string, std::string>, size_t> by_call;  // (job, call) → card
  std::vector<bool> parked;                                       // per card: ended parked
  std::vector<size_t> open_parks;  // cards that ended parked, oldest first
  for (const LedgerRecord& r : records) {
    const bool known_event = r.event == "started" || r.event == "finished" || r.event == "error" ||
                             r.event == "reconciled" || r.event == "parked";
    if (!known_event || r.key.call_id.empty()) continue;
    const auto key = std::make_pair(r.key.job_id, r.key.call_id);
    auto it = by_call.find(key);
    if (it == by_call.end()) {
      // A re-issued park call joins the park's card (the newest that matches).
      for (auto p = open_parks.rbegin(); p != open_parks.rend(); ++p) {
        if (SameLogicalCall(cards[*p], r)) {
          it = by_call.emplace(key, *p).first;
          break;
        }
      }
    }
    if (it == by_call.end()) {
      ToolCard c;
      c.job_id = r.key.job_id;
      c.call_id = r.key.call_id;
      c.tool = r.tool;
      c.args = r.args.is_object() ? r.args : Json::object();
      c.read_only = r.read_only;
      c.status = "running";
      c.started_at = r.event == "started" ? r.ts : r.ts - r.duration_ms;
      cards.push_back(std::move(c));
      parked.push_back(false);
      it = by_call.emplace(key, cards.size() - 1).first;
    }
    ToolCard& c = cards[it->second];
    if (r.event == "started") {
      if (c.args.empty() && r.args.is_object()) c.args = r.args;
      c.read_only = r.read_only;
      continue;
    }
    c.result = std::string(Utf8Prefix(r.result, kLedgerResultBytes));
    c.finished_at = r.ts;
    // A re-issue's end: the card lasted from the park to now (the wait too).
    c.duration_ms = parked[it->second] ? r.ts - c.started_at : r.duration_ms;
    const bool now_parked = r.event == "parked";
    if (parked[it->second] != now_parked) {
      if (now_parked) {
        open_parks.push_back(it->second);
      } else {
        open_parks.erase(std::find(open_parks.begin(), open_parks.end(), it->second));
      }
    }
    parked[it->second] = now_parked;
    c.status = r.event;  // finished | error | reconciled | parked (settled below)
  }
  for (size_t i = 0; i < cards.size(); ++i) {
    if (!parked[i]) continue;
    if (job_parked && job_parked(cards[i].job_id)) {
      cards[i].status = "waiting";
      cards[i].finished_at.reset();
    } else {
      cards[i].status = "finished";  // resumed without re-issuing it: its answer stands
    }
  }
  return cards;
}

}  // namespace maestro::tools
