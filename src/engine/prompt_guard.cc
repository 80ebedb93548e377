#include "engine/prompt_guard.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <fstream>
#include <unordered_map>

#include "context/token_estimate.h"
#include "core/hash.h"
#include "engine/agent_loop.h"
#include "engine/handoff/trigger.h"

namespace maestro::engine {
namespace {

MovementResult OverflowAbort(const std::string& movement, std::string details) {
  MovementResult r;
  r.movement = movement;
  r.next = std::string(SentinelName(Sentinel::kAbort));
  r.abort_reason = kAbortContextOverflow;
  r.result = std::move(details);
  return r;
}

int64_t ToolsTokens(const AgentLoopDeps& d) {
  return context::EstimateToolsTokens(d.piece_tools->bytes);
}

// The tokens below which the guard leaves the conversation alone.
int64_t GuardThreshold(const AgentLoopDeps& d) {
  const context::ContextConfig& c = d.ctx->config();
  double fraction = c.compression_threshold;
  if (d.handoff) fraction = std::min(fraction, c.handoff_threshold);
  return static_cast<int64_t>(static_cast<double>(c.context_length) * fraction);
}

// Step 2: sets out->messages_path / estimate to the dedup copy when on.
void Deduplicate(AgentLoopDeps& d, GuardOutcome* out) {
  PromptGuardState& g = d.guard;
  if (!g.dedup_active && out->estimate <= GuardThreshold(d)) return;
  if (!g.dedup_active) {
    spdlog::info("job {}: prompt guard: estimate {} over {}, deduplicating what is sent", d.job_id,
                 out->estimate, GuardThreshold(d));
  }
  g.dedup_active = true;
  std::string sent = d.ctx->dir() + "/sent.jsonl";
  auto stats =
      WriteDeduplicatedMessages(*d.env, d.ctx->messages().current_path(), sent, g.dedup_min_bytes);
  if (!stats.ok()) {  // not fatal: the full conversation is still valid to send
    spdlog::warn("job {}: dedup: {}", d.job_id, stats.status().ToString());
    return;
  }
  g.last_dedup_saved_tokens = d.ctx->messages().calibration().Apply(stats->raw_tokens_saved);
  g.sent_raw_saved = 0;
  if (stats->results_replaced == 0) return;  // identical bytes: send the original
  g.sent_raw_saved = stats->raw_tokens_saved;
  out->messages_path = sent;
  out->estimate = std::max<int64_t>(0, out->estimate - g.last_dedup_saved_tokens);
}

void Estimate(AgentLoopDeps& d, GuardOutcome* out) {
  d.guard.sent_raw_saved = 0;
  out->messages_path = d.ctx->messages().current_path();
  out->estimate = d.ctx->messages().EstimatePromptTokens(ToolsTokens(d));
  Deduplicate(d, out);
}

// Step 4. False when a compression was needed and failed.
bool Summarize(AgentLoopDeps& d, GuardOutcome* out, bool force) {
  if (!d.compressor || !(force || d.compressor->ShouldCompress(out->estimate))) return !force;
  auto done = d.compressor->Compress(*d.ctx, ToolsTokens(d), d.cancel);
  if (!done.ok()) {
    spdlog::warn("job {}: compression failed: {}", d.job_id, done.status().ToString());
    return false;
  }
  Estimate(d, out);
  return true;
}

// Step 5: the session cannot go on; hand off, else abort.
GuardOutcome Overflow(AgentLoopDeps& d, const std::string& movement, GuardOutcome out,
                      const std::string& why) {
  std::string details = why;
  if (d.handoff) {
    auto handed = d.handoff->OnOverflow(d, movement, why);
    if (handed.ok()) {
      out.end = std::move(handed).value();
      return out;
    }
    details += "; handoff impossible: " + handed.status().message();
    // No fresh session can take over: compression is the remaining way on.
    if (Summarize(d, &out, /*force=*/true) && out.estimate <= d.ctx->config().context_length) {
      return out;
    }
  }
  out.end = OverflowAbort(movement, details);
  return out;
}

}  // namespace

std::string DedupReference(const std::string& first_call_id, size_t bytes) {
  return fmt::format(
      "[maestro: identical to the result of tool call {} earlier in this conversation ({} bytes); "
      "not repeated]",
      first_call_id, bytes);
}

Result<DedupStats> WriteDeduplicatedMessages(Env& env, const std::string& in_path,
                                             const std::string& out_path, size_t min_bytes) {
  std::ifstream in(in_path, std::ios::binary);
  if (!in) return NotFound("cannot read " + in_path);
  MAESTRO_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file, env.NewWritableFile(out_path));
  // Lines are gathered so a long conversation costs few write(2) calls.
  std::string out;
  auto flush = [&](bool force) -> Status {
    if (!force && out.size() < 64 * 1024) return Status::Ok();
    Status st = file->Append(out);
    out.clear();
    return st;
  };
  DedupStats stats;
  std::unordered_map<std::string, std::string> first_call;  // content hash -> call id
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    // Cheap filter before parsing: only tool messages can be replaced.
    if (line.size() >= min_bytes && line.find("\"role\":\"tool\"") != std::string::npos) {
      Json msg = Json::parse(line, nullptr, /*allow_exceptions=*/false);
      const Json* content = msg.is_object() ? &msg["content"] : nullptr;
      if (content && content->is_string() &&
          content->get_ref<const std::string&>().size() >= min_bytes) {
        const std::string& text = content->get_ref<const std::string&>();
        std::string id = msg.value("tool_call_id", "");
        auto [it, fresh] = first_call.emplace(Sha256Hex(text), id);
        if (!fresh) {
          int64_t before = context::EstimateMessageTokens(msg);
          size_t bytes = text.size();
          msg["content"] = DedupReference(it->second, bytes);
          stats.raw_tokens_saved += before - context::EstimateMessageTokens(msg);
          stats.bytes_saved +=
              static_cast<int64_t>(bytes) -
              static_cast<int64_t>(msg["content"].get_ref<const std::string&>().size());
          ++stats.results_replaced;
          out += DumpJson(msg);
          out += '\n';
          MAESTRO_RETURN_IF_ERROR(flush(false));
          continue;
        }
      }
    }
    out += line;
    out += '\n';
    MAESTRO_RETURN_IF_ERROR(flush(false));
  }
  MAESTRO_RETURN_IF_ERROR(flush(true));
  MAESTRO_RETURN_IF_ERROR(file->Close());
  return stats;
}

int64_t ObservedPromptTokens(const AgentLoopDeps& d, int64_t prompt_tokens) {
  int64_t saved = d.guard.sent_raw_saved;
  if (saved <= 0) return prompt_tokens;
  int64_t full = d.ctx->messages().current_raw_tokens() + ToolsTokens(d);
  if (full <= saved) return prompt_tokens;
  return static_cast<int64_t>(static_cast<double>(prompt_tokens) * static_cast<double>(full) /
                              static_cast<double>(full - saved));
}

GuardOutcome GuardPrompt(AgentLoopDeps& d, const std::string& movement, bool server_overflow) {
  GuardOutcome out;
  Estimate(d, &out);
  if (d.handoff && !server_overflow) {
    int64_t lines = d.ctx->messages().current_lines();
    if (auto end = d.handoff->BeforeCall(d, movement, out.estimate)) {
      out.end = std::move(end);
      return out;
    }
    if (d.ctx->messages().current_lines() != lines) Estimate(d, &out);  // request appended
  }
  const int64_t limit = d.ctx->config().context_length;
  bool handoff_pending = d.handoff && d.handoff->requested();
  if (server_overflow) {
    // The estimate was wrong: the context really is full. A handoff keeps
    // the facts intact; without one, one forced compression may save it.
    if (d.handoff || !Summarize(d, &out, /*force=*/true)) {
      return Overflow(d, movement, std::move(out), "the server rejected the prompt as too long");
    }
  } else if (!handoff_pending) {
    (void)Summarize(d, &out, /*force=*/false);
  }
  if (out.estimate > limit) {
    return Overflow(d, movement, std::move(out),
                    fmt::format("the prompt ({} estimated tokens) does not fit the context ({})",
                                out.estimate, limit));
  }
  return out;
}

}  // namespace maestro::engine
