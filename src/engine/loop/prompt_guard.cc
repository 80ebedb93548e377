#include "engine/loop/prompt_guard.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <unordered_map>

#include "context/token_estimate.h"
#include "core/durable_file.h"
#include "core/hash.h"
#include "engine/handoff/trigger.h"
#include "engine/loop/movement_runner.h"

namespace maestro::engine {
namespace {

MovementResult OverflowAbort(const std::string& movement, std::string details) {
  return AbortedMovement(movement, kAbortContextOverflow, std::move(details));
}

int64_t ToolsTokens(const AgentLoopDeps& d) {
  return context::EstimateToolsTokens(d.loop.piece_tools->bytes);
}

// The tokens below which the guard leaves the conversation alone.
int64_t GuardThreshold(const AgentLoopDeps& d) {
  const context::ContextConfig& c = d.loop.ctx->config();
  double fraction = c.compression_threshold;
  if (d.loop.handoff) fraction = std::min(fraction, c.handoff_threshold);
  return static_cast<int64_t>(static_cast<double>(c.context_length) * fraction);
}

// Step 2: sets out->messages_path / estimate to the dedup copy when on.
void Deduplicate(AgentLoopDeps& d, GuardOutcome* out) {
  PromptGuardState& g = d.loop.guard;
  if (!g.dedup_active && out->estimate <= GuardThreshold(d)) return;
  if (!g.dedup_active) {
    spdlog::info("job {}: prompt guard: estimate {} over {}, deduplicating what is sent",
                 d.scope.job_id, out->estimate, GuardThreshold(d));
  }
  g.dedup_active = true;
  if (!g.dedup) g.dedup = std::make_shared<DedupCopy>();
  std::string sent = d.loop.ctx->dir() + "/sent.jsonl";
  const context::MessageStore& messages = d.loop.ctx->messages();
  auto stats = g.dedup->Update(*d.services.env, messages.current_path(),
                               messages.current_generation(), sent, g.dedup_min_bytes);
  if (!stats.ok()) {  // not fatal: the full conversation is still valid to send
    spdlog::warn("job {}: dedup: {}", d.scope.job_id, stats.status().ToString());
    return;
  }
  g.last_dedup_saved_tokens = d.loop.ctx->messages().calibration().Apply(stats->raw_tokens_saved);
  g.sent_raw_saved = 0;
  if (stats->results_replaced == 0) return;  // identical bytes: send the original
  g.sent_raw_saved = stats->raw_tokens_saved;
  out->messages_path = sent;
  // Copied or re-serialized lines of a file of whole lines are whole lines.
  out->messages_known_bytes = messages.current_known_bytes() > 0 ? g.dedup->out_bytes() : 0;
  out->estimate = std::max<int64_t>(0, out->estimate - g.last_dedup_saved_tokens);
}

void Estimate(AgentLoopDeps& d, GuardOutcome* out) {
  d.loop.guard.sent_raw_saved = 0;
  out->messages_path = d.loop.ctx->messages().current_path();
  out->messages_known_bytes = d.loop.ctx->messages().current_known_bytes();
  out->estimate = d.loop.ctx->messages().EstimatePromptTokens(ToolsTokens(d));
  Deduplicate(d, out);
}

// Step 4. False when a compression was needed and failed.
bool Summarize(AgentLoopDeps& d, GuardOutcome* out, bool force) {
  if (!d.services.compressor || !(force || d.services.compressor->ShouldCompress(out->estimate)))
    return !force;
  auto done = d.services.compressor->Compress(*d.loop.ctx, ToolsTokens(d), d.scope.cancel);
  if (!done.ok()) {
    spdlog::warn("job {}: compression failed: {}", d.scope.job_id, done.status().ToString());
    return false;
  }
  Estimate(d, out);
  return true;
}

// Step 5: the session cannot go on; hand off, else abort.
GuardOutcome Overflow(AgentLoopDeps& d, const std::string& movement, GuardOutcome out,
                      const std::string& why) {
  std::string details = why;
  if (d.loop.handoff) {
    auto handed = d.loop.handoff->OnOverflow(d, movement, why);
    if (handed.ok()) {
      out.end = std::move(handed).value();
      return out;
    }
    details += "; handoff impossible: " + handed.status().message();
    // No fresh session can take over: compression is the remaining way on.
    if (Summarize(d, &out, /*force=*/true) && out.estimate <= d.loop.ctx->config().context_length) {
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

Status DedupCopy::Restart(Env& env, const std::string& in_path, uint64_t in_generation,
                          const std::string& out_path, size_t min_bytes) {
  out_.reset();
  MAESTRO_ASSIGN_OR_RETURN(out_, env.NewWritableFile(out_path));
  in_path_ = in_path;
  out_path_ = out_path;
  generation_ = in_generation;
  min_bytes_ = min_bytes;
  in_done_ = out_bytes_ = 0;
  first_call_.clear();
  stats_ = DedupStats{};
  return Status::Ok();
}

Result<DedupStats> DedupCopy::Update(Env& env, const std::string& in_path, uint64_t in_generation,
                                     const std::string& out_path, size_t min_bytes) {
  if (!out_ || in_path != in_path_ || out_path != out_path_ || in_generation != generation_ ||
      min_bytes != min_bytes_) {
    MAESTRO_RETURN_IF_ERROR(Restart(env, in_path, in_generation, out_path, min_bytes));
  }
  // Lines are gathered so a long conversation costs few write(2) calls.
  std::string out;
  Status written;
  auto flush = [&](bool force) {
    if (!written.ok() || (!force && out.size() < 64 * 1024)) return;
    written = out_->Append(out);
    out_bytes_ += out.size();
    out.clear();
  };
  uint64_t done = in_done_;
  Status scan = ForEachLine(
      env, in_path,
      [&](std::string_view line, uint64_t offset) {
        done = offset + line.size() + 1;
        if (line.empty()) return true;
        // Cheap filter before parsing: only tool messages can be replaced.
        if (line.size() >= min_bytes && line.find("\"role\":\"tool\"") != std::string::npos) {
          Json msg = Json::parse(line, nullptr, /*allow_exceptions=*/false);
          const Json* content = msg.is_object() ? &msg["content"] : nullptr;
          if (content && content->is_string() &&
              content->get_ref<const std::string&>().size() >= min_bytes) {
            const std::string& text = content->get_ref<const std::string&>();
            std::string id = msg.value("tool_call_id", "");
            auto [it, fresh] = first_call_.emplace(Sha256Hex(text), id);
            if (!fresh) {
              int64_t before = context::EstimateMessageTokens(msg);
              size_t bytes = text.size();
              msg["content"] = DedupReference(it->second, bytes);
              stats_.raw_tokens_saved += before - context::EstimateMessageTokens(msg);
              stats_.bytes_saved +=
                  static_cast<int64_t>(bytes) -
                  static_cast<int64_t>(msg["content"].get_ref<const std::string&>().size());
              ++stats_.results_replaced;
              out += DumpJson(msg);
              out += '\n';
              flush(false);
              return written.ok();
            }
          }
        }
        out += line;
        out += '\n';
        flush(false);
        return written.ok();
      },
      in_done_);
  flush(true);
  if (!scan.ok() || !written.ok()) {
    out_.reset();  // part of a line may be out: the next Update starts over
    return !scan.ok() ? scan : written;
  }
  in_done_ = done;
  return stats_;
}

Result<DedupStats> WriteDeduplicatedMessages(Env& env, const std::string& in_path,
                                             const std::string& out_path, size_t min_bytes) {
  if (!env.FileExists(in_path)) return NotFound("cannot read " + in_path);
  return DedupCopy().Update(env, in_path, 0, out_path, min_bytes);
}

int64_t ObservedPromptTokens(const AgentLoopDeps& d, int64_t prompt_tokens) {
  int64_t saved = d.loop.guard.sent_raw_saved;
  if (saved <= 0) return prompt_tokens;
  int64_t full = d.loop.ctx->messages().current_raw_tokens() + ToolsTokens(d);
  if (full <= saved) return prompt_tokens;
  return static_cast<int64_t>(static_cast<double>(prompt_tokens) * static_cast<double>(full) /
                              static_cast<double>(full - saved));
}

GuardOutcome GuardPrompt(AgentLoopDeps& d, const std::string& movement, bool server_overflow) {
  GuardOutcome out;
  Estimate(d, &out);
  if (d.loop.handoff && !server_overflow) {
    int64_t lines = d.loop.ctx->messages().current_lines();
    if (auto end = d.loop.handoff->BeforeCall(d, movement, out.estimate)) {
      out.end = std::move(end);
      return out;
    }
    if (d.loop.ctx->messages().current_lines() != lines) Estimate(d, &out);  // request appended
  }
  const int64_t limit = d.loop.ctx->config().context_length;
  bool handoff_pending = d.loop.handoff && d.loop.handoff->requested();
  if (server_overflow) {
    // The estimate was wrong: the context really is full. A handoff keeps
    // the facts intact; without one, one forced compression may save it.
    if (d.loop.handoff || !Summarize(d, &out, /*force=*/true)) {
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
