#include "engine/prompt/transcript_replay.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "tools/tool_names.h"

namespace maestro::engine {

namespace {

std::string Role(const Json& m) { return m.is_object() ? m.value("role", "") : ""; }

std::string CallName(const Json& call) {
  if (!call.is_object() || !call.contains("function") || !call["function"].is_object()) return "";
  return call["function"].value("name", "");
}

std::string CallId(const Json& call) {
  return call.is_object() && call.contains("id") && call["id"].is_string()
             ? call["id"].get<std::string>()
             : "";
}

// Text of a message's content: a string, or the text parts of an array.
std::string ContentText(const Json& m) {
  auto it = m.find("content");
  if (it == m.end() || it->is_null()) return "";
  if (it->is_string()) return it->get<std::string>();
  std::string out;
  if (it->is_array()) {
    for (const auto& part : *it) {
      if (part.is_object() && part.value("type", "") == "text") out += part.value("text", "");
    }
  }
  return out;
}

bool IsBlank(const std::string& s) { return s.find_first_not_of(" \t\r\n") == std::string::npos; }

// A `complete` that asked the user (status needs_user_input).
bool IsAsk(const Json& call) {
  const Json& fn = call["function"];
  auto args = fn.find("arguments");
  if (args == fn.end()) return false;
  Json parsed = args->is_string() ? Json::parse(args->get<std::string>(), nullptr, false) : *args;
  return parsed.is_object() && parsed.value("status", "") == "needs_user_input";
}

bool HasCalls(const Json& m) {
  auto it = m.find("tool_calls");
  return it != m.end() && it->is_array() && !it->empty();
}

// Which call (message index, call index) each tool result answers, pairing a
// result with the latest unanswered call of that id before it.
struct Pairing {
  std::map<std::pair<size_t, size_t>, size_t> result_of;  // call -> result message
  std::map<size_t, std::pair<size_t, size_t>> call_of;    // result message -> call
};

Pairing PairCalls(const std::vector<Json>& msgs) {
  Pairing p;
  std::map<std::string, std::pair<size_t, size_t>> pending;
  for (size_t i = 0; i < msgs.size(); ++i) {
    const Json& m = msgs[i];
    std::string role = Role(m);
    if (role == "assistant" && HasCalls(m)) {
      const Json& calls = m["tool_calls"];
      for (size_t j = 0; j < calls.size(); ++j) pending[CallId(calls[j])] = {i, j};
    } else if (role == "tool") {
      auto it = pending.find(m.value("tool_call_id", ""));
      if (it == pending.end()) continue;
      p.result_of[it->second] = i;
      p.call_of[i] = it->second;
      pending.erase(it);
    }
  }
  return p;
}

// Rules 4 and 5: which calls of assistant message `i` survive.
std::vector<bool> KeptCalls(const std::vector<Json>& msgs, size_t i, const Pairing& p,
                            bool keep_transitions, ReplayStats& st) {
  const Json& calls = msgs[i]["tool_calls"];
  std::vector<bool> keep(calls.size(), false);
  auto answered = [&](size_t j) { return p.result_of.count({i, j}) > 0; };
  bool drop_transitions = false;
  for (size_t j = 0; j < calls.size(); ++j) {
    if (CallName(calls[j]) != tools::kComplete) continue;
    bool error_answered =
        answered(j) && ContentText(msgs[p.result_of.at({i, j})]).rfind("Error", 0) == 0;
    keep[j] = error_answered;
    if (error_answered) continue;
    drop_transitions = true;
    if (answered(j) && IsAsk(calls[j])) {
      keep[j] = true;  // rule 4b: the question the next user turn answers
      ++st.kept_asks;
    } else {
      ++st.dropped_completes;
    }
  }
  for (size_t j = 0; j < calls.size(); ++j) {
    std::string name = CallName(calls[j]);
    if (name == tools::kComplete) continue;
    if (name == tools::kTransition) {
      keep[j] = !drop_transitions && keep_transitions && answered(j);
      if (!keep[j]) ++st.dropped_transitions;
      continue;
    }
    keep[j] = answered(j);
    if (!keep[j]) ++st.dropped_unanswered;
  }
  return keep;
}

}  // namespace

std::vector<std::vector<Json>> SplitThreads(std::vector<Json> lines) {
  std::vector<std::vector<Json>> threads;
  for (auto& m : lines) {
    if (Role(m) == "system" || threads.empty()) threads.emplace_back();
    threads.back().push_back(std::move(m));
  }
  return threads;
}

std::vector<Json> CleanThread(std::vector<Json> thread, bool keep_transitions, ReplayStats* stats) {
  ReplayStats local;
  ReplayStats& st = stats ? *stats : local;
  std::vector<Json> msgs;
  for (auto& m : thread) {
    if (Role(m) != "system") msgs.push_back(std::move(m));
  }
  Pairing p = PairCalls(msgs);
  std::set<std::pair<size_t, size_t>> kept_calls;
  std::vector<Json> out;
  for (size_t i = 0; i < msgs.size(); ++i) {
    std::string role = Role(msgs[i]);
    // Decided before msgs[i] is moved out; KeptCalls reads only this call
    // message and the results after it, which are still in place.
    std::vector<bool> keep;
    if (role == "assistant" && HasCalls(msgs[i]))
      keep = KeptCalls(msgs, i, p, keep_transitions, st);
    Json m = std::move(msgs[i]);
    if (role == "assistant") {
      if (HasCalls(m)) {
        Json calls = Json::array();
        for (size_t j = 0; j < keep.size(); ++j) {
          if (!keep[j]) continue;
          calls.push_back(m["tool_calls"][j]);
          kept_calls.insert({i, j});
        }
        if (calls.empty())
          m.erase("tool_calls");
        else
          m["tool_calls"] = std::move(calls);
      }
      if (!HasCalls(m) && IsBlank(ContentText(m))) {
        ++st.dropped_empty_assistants;
        continue;
      }
    } else if (role == "tool") {
      auto it = p.call_of.find(i);
      if (it == p.call_of.end() || !kept_calls.count(it->second)) {
        // A result whose call was dropped (complete, transition) is counted
        // with its call; only true orphans count here.
        if (it == p.call_of.end()) ++st.dropped_orphan_results;
        continue;
      }
    }
    out.push_back(std::move(m));
  }
  return out;
}

namespace {

// Rule 7: renames this thread's ids that an earlier thread already used.
void RenameCollidingIds(std::vector<Json>& thread, int index, std::set<std::string>& used,
                        ReplayStats& st) {
  std::set<std::string> mine;
  for (const auto& m : thread) {
    if (Role(m) == "assistant" && HasCalls(m)) {
      for (const auto& c : m["tool_calls"]) mine.insert(CallId(c));
    }
  }
  std::map<std::string, std::string> rename;
  for (const auto& id : mine) {
    if (!used.count(id)) continue;
    std::string fresh = fmt::format("{}_t{}", id, index);
    for (int n = 2; used.count(fresh) || mine.count(fresh); ++n) {
      fresh = fmt::format("{}_t{}_{}", id, index, n);
    }
    rename[id] = fresh;
    ++st.renamed_ids;
  }
  for (auto& m : thread) {
    if (Role(m) == "assistant" && HasCalls(m)) {
      for (auto& c : m["tool_calls"]) {
        auto it = rename.find(CallId(c));
        if (it != rename.end()) c["id"] = it->second;
      }
    } else if (Role(m) == "tool") {
      auto it = rename.find(m.value("tool_call_id", ""));
      if (it != rename.end()) m["tool_call_id"] = it->second;
    }
  }
  for (const auto& id : mine) used.insert(rename.count(id) ? rename[id] : id);
}

}  // namespace

ReplayResult ReplayMessages(std::vector<Json> lines, const ReplayOptions& options) {
  ReplayResult r;
  auto threads = SplitThreads(std::move(lines));
  r.stats.threads = static_cast<int>(threads.size());
  std::set<std::string> used;
  for (size_t t = 0; t < threads.size(); ++t) {
    bool last = t + 1 == threads.size();
    std::vector<Json> cleaned = CleanThread(
        std::move(threads[t]), last && options.keep_transitions_in_last_thread, &r.stats);
    RenameCollidingIds(cleaned, static_cast<int>(t), used, r.stats);
    for (auto& m : cleaned) r.messages.push_back(std::move(m));
  }
  return r;
}

Result<ReplayResult> ReplayTranscriptFile(const std::string& path, const ReplayOptions& options) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return ReplayResult{};
  std::ifstream in(path, std::ios::binary);
  if (!in) return Unavailable(fmt::format("{}: cannot read transcript", path));
  std::vector<Json> lines;
  int skipped = 0;
  std::string line;
  while (std::getline(in, line)) {
    if (IsBlank(line)) continue;
    Json j = Json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) {
      ++skipped;  // a torn last line after a crash, or garbage: never fatal
      continue;
    }
    lines.push_back(std::move(j));
  }
  ReplayResult r = ReplayMessages(std::move(lines), options);
  r.stats.skipped_lines = skipped;
  return r;
}

}  // namespace maestro::engine
