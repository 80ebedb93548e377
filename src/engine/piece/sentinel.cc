#include "engine/piece/sentinel.h"

#include <array>
#include <utility>

namespace maestro::engine {

namespace {
constexpr std::array<std::pair<Sentinel, std::string_view>, 9> kNames = {{
    {Sentinel::kComplete, "COMPLETE"},
    {Sentinel::kAbort, "ABORT"},
    {Sentinel::kAsk, "ASK"},
    {Sentinel::kWaitSubtasks, "WAIT_SUBTASKS"},
    {Sentinel::kWaitingHumanBrowser, "WAITING_HUMAN_BROWSER"},
    {Sentinel::kWaitingHumanToolRequest, "WAITING_HUMAN_TOOL_REQUEST"},
    {Sentinel::kWaitingHumanPackageRequest, "WAITING_HUMAN_PACKAGE_REQUEST"},
    {Sentinel::kWaitingHumanSpawnRequest, "WAITING_HUMAN_SPAWN_REQUEST"},
    {Sentinel::kWaitingHumanBudget, "WAITING_HUMAN_BUDGET"},
}};
}  // namespace

std::string_view SentinelName(Sentinel s) {
  for (const auto& [v, n] : kNames) {
    if (v == s) return n;
  }
  return "?";
}

std::optional<Sentinel> ParseSentinel(std::string_view name) {
  for (const auto& [v, n] : kNames) {
    if (n == name) return v;
  }
  return std::nullopt;
}

}  // namespace maestro::engine
