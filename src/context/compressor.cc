#include "context/compressor.h"

#include <fmt/format.h>

#include "context/task_context.h"
#include "context/token_estimate.h"
#include "core/strings.h"

namespace maestro::context {
namespace {

struct LineInfo {
  uint64_t offset = 0;
  uint64_t length = 0;  // without '\n'
  std::string role;
  int64_t tokens = 0;
};

Result<std::vector<LineInfo>> ScanCurrent(Env& env, const std::string& path) {
  std::vector<LineInfo> lines;
  MAESTRO_RETURN_IF_ERROR(ForEachLine(env, path, [&](std::string_view line, uint64_t off) {
    if (line.empty()) return true;
    Json m = Json::parse(line, nullptr, false);
    LineInfo li{off, line.size(), m.is_object() ? m.value("role", "") : "", 0};
    li.tokens = EstimateMessageTokens(m);
    lines.push_back(std::move(li));
    return true;
  }));
  return lines;
}

// Plain text of one message for the summarizer.
std::string RenderForSummary(const Json& m) {
  std::string role = m.value("role", "?");
  std::string out = "### " + role + "\n";
  if (auto c = m.find("content"); c != m.end()) {
    if (c->is_string()) {
      out += c->get<std::string>();
    } else if (c->is_array()) {  // content parts: the text, and a mark per image
      for (const auto& part : *c) {
        if (!part.is_object()) continue;
        if (part.value("type", "") == "image_url") {
          out += "[image]\n";
        } else if (part.contains("text") && part["text"].is_string()) {
          out += part["text"].get<std::string>() + "\n";
        }
      }
    } else if (!c->is_null()) {
      out += c->dump(-1, ' ', false, Json::error_handler_t::replace);
    }
    out += "\n";
  }
  if (auto calls = m.find("tool_calls"); calls != m.end() && calls->is_array()) {
    for (const auto& call : *calls) {
      const Json fn = call.value("function", Json::object());
      out += fmt::format("-> call {} {}({})\n", call.value("id", ""), fn.value("name", ""),
                         fn.value("arguments", ""));
    }
  }
  if (m.contains("tool_call_id")) out += "(result of call " + m.value("tool_call_id", "") + ")\n";
  return out + "\n";
}

// The body of a JSON string literal (without quotes) for `text`.
std::string JsonStringBody(const std::string& text) {
  std::string s = Json(text).dump(-1, ' ', false, Json::error_handler_t::replace);
  return s.substr(1, s.size() - 2);
}

Status WriteSummaryRequest(Env& env, const std::string& path, const std::string& prompt,
                           const std::string& current_path, uint64_t to_offset) {
  return ReplaceFile(env, path, [&](const ByteSink& sink) -> Status {
    MAESTRO_RETURN_IF_ERROR(sink(MessageLine({{"role", "system"}, {"content", prompt}})));
    MAESTRO_RETURN_IF_ERROR(sink(R"({"role":"user","content":")"));
    MAESTRO_RETURN_IF_ERROR(sink(JsonStringBody("Messages to summarize:\n\n")));
    Status inner;
    bool first = true;
    MAESTRO_RETURN_IF_ERROR(
        ForEachLine(env, current_path, [&](std::string_view line, uint64_t off) {
          if (off >= to_offset) return false;
          if (first) {  // the system message is kept as is, not summarized
            first = false;
            return true;
          }
          if (line.empty()) return true;
          inner = sink(JsonStringBody(RenderForSummary(Json::parse(line, nullptr, false))));
          return inner.ok();
        }));
    MAESTRO_RETURN_IF_ERROR(inner);
    return sink("\"}\n");
  });
}

}  // namespace

size_t ChooseTailStart(const std::vector<std::string>& roles, int keep_recent) {
  size_t n = roles.size();
  if (n < 3) return 0;
  size_t keep = static_cast<size_t>(std::max(1, keep_recent));
  size_t t = n > keep + 1 ? n - keep : 2;
  // A tool result must stay with the assistant message that called it: move
  // the cut back over results to their call.
  while (t > 1 && roles[t] == "tool") --t;
  return t > 1 ? t : 0;
}

ContextCompressor::ContextCompressor(llm::LlmClient* llm, ContextConfig config)
    : llm_(llm), config_(std::move(config)) {}

int64_t ContextCompressor::ThresholdTokens() const {
  return static_cast<int64_t>(static_cast<double>(config_.context_length) *
                              config_.compression_threshold);
}

bool ContextCompressor::ShouldCompress(int64_t prompt_estimate) const {
  return prompt_estimate > ThresholdTokens();
}

Result<CompressionOutcome> ContextCompressor::Compress(TaskContext& ctx, int64_t tools_tokens,
                                                       CancelToken* cancel) {
  auto r = Compress(ctx.messages(), ctx.summaries(), ctx.job_id(), ctx.dir() + "/compress",
                    tools_tokens, cancel);
  if (!r.ok()) {
    ctx.events()
        .Append("context.compression_failed", {{"error", r.status().ToString()}}, ctx.job_id())
        .status()
        .IgnoreError();
    return r;
  }
  MAESTRO_RETURN_IF_ERROR(ctx.RecordLlmCall(r->usage.prompt_tokens, r->usage.completion_tokens));
  MAESTRO_RETURN_IF_ERROR(ctx.RecordCompression());
  Json p = {{"summary_id", r->summary_id},     {"start_seq", r->start_seq},
            {"end_seq", r->end_seq},           {"tokens_before", r->tokens_before},
            {"tokens_after", r->tokens_after}, {"still_over_threshold", r->still_over_threshold}};
  MAESTRO_RETURN_IF_ERROR(ctx.events().Append("context.compressed", p, ctx.job_id()).status());
  return r;
}

namespace {

// The split of current.jsonl chosen for one compression.
struct CompressionPlan {
  std::vector<LineInfo> lines;
  size_t tail = 0;  // first kept line after the system line
  int64_t original_tokens = 0;
};

Result<CompressionPlan> PlanCompression(const MessageStore& messages, int keep_recent,
                                        CompressionOutcome* out) {
  CompressionPlan plan;
  MAESTRO_ASSIGN_OR_RETURN(plan.lines, ScanCurrent(messages.env(), messages.current_path()));
  MAESTRO_ASSIGN_OR_RETURN(std::vector<CurrentEntry> entries, messages.CurrentEntries());
  if (entries.size() != plan.lines.size()) {
    return Internal(fmt::format("current.jsonl has {} lines but the archive says {}",
                                plan.lines.size(), entries.size()));
  }
  std::vector<std::string> roles;
  for (const auto& l : plan.lines) roles.push_back(l.role);
  plan.tail = ChooseTailStart(roles, keep_recent);
  if (plan.tail == 0) {
    return Conflict("nothing to compress: the conversation is only its head and tail");
  }
  out->summarized_lines = static_cast<int64_t>(plan.tail - 1);
  out->kept_lines = static_cast<int64_t>(plan.lines.size() - plan.tail + 1);
  out->start_seq = entries[1].lo;
  for (size_t i = 1; i < plan.tail; ++i) {
    out->start_seq = std::min(out->start_seq, entries[i].lo);
    out->end_seq = std::max(out->end_seq, entries[i].hi);
    plan.original_tokens += plan.lines[i].tokens;
  }
  return plan;
}

}  // namespace

// Calls the LLM up to summary_max_attempts times; an error or an empty text
// is a failed attempt.
Result<std::string> ContextCompressor::RequestSummary(const std::string& request_path,
                                                      CancelToken* cancel,
                                                      CompressionOutcome* out) {
  Status last_error = Unavailable("no summary attempt made");
  for (int attempt = 1; attempt <= config_.summary_max_attempts; ++attempt) {
    if (cancel && cancel->IsCancelled()) {
      return Status(StatusCode::kCancelled, "compression cancelled");
    }
    out->attempts = attempt;
    llm::ChatRequest req;
    req.messages_path = request_path;
    llm::LlmCallResult res = llm_->Chat(req, nullptr, cancel);
    if (res.ok() && !Trim(res.response.content, kHttpSpace).empty()) {
      out->usage = res.response.usage;
      return std::string(Trim(res.response.content, kHttpSpace));
    }
    last_error = res.ok() ? Unavailable("the summary call returned no text") : res.status;
  }
  return Status(StatusCode::kUnavailable, fmt::format("summary failed after {} attempts: {}",
                                                      out->attempts, last_error.ToString()));
}

Result<CompressionOutcome> ContextCompressor::Compress(MessageStore& messages,
                                                       SummaryStore& summaries,
                                                       const std::string& job_id,
                                                       const std::string& work_dir,
                                                       int64_t tools_tokens, CancelToken* cancel) {
  CompressionOutcome out;
  MAESTRO_ASSIGN_OR_RETURN(CompressionPlan plan,
                           PlanCompression(messages, config_.keep_recent_messages, &out));
  out.tokens_before = messages.EstimatePromptTokens(tools_tokens);
  const auto& lines = plan.lines;

  Env& env = messages.env();
  MAESTRO_RETURN_IF_ERROR(env.CreateDirs(work_dir));
  const std::string request_path = work_dir + "/summary_request.jsonl";
  struct Cleanup {  // the request files are transient
    Env& env;
    std::string dir;
    ~Cleanup() { (void)env.RemoveAll(dir); }
  } cleanup{env, work_dir};
  MAESTRO_RETURN_IF_ERROR(WriteSummaryRequest(env, request_path, config_.summary_prompt,
                                              messages.current_path(), lines[plan.tail].offset));
  MAESTRO_ASSIGN_OR_RETURN(std::string summary, RequestSummary(request_path, cancel, &out));

  Json summary_msg = {
      {"role", "user"},
      {"content", fmt::format("[Summary of the earlier conversation, messages {}-{}]\n{}",
                              out.start_seq, out.end_seq, summary)}};
  // The archive first: it is the write-ahead log Open() rebuilds from.
  MAESTRO_RETURN_IF_ERROR(
      messages.ArchiveSummary(summary_msg, job_id, out.summarized_lines, out.start_seq, out.end_seq)
          .status());
  const std::string cur = messages.current_path();
  const uint64_t head_end = lines[0].offset + lines[0].length + 1;
  const uint64_t tail_from = lines[plan.tail].offset;
  const uint64_t end = lines.back().offset + lines.back().length + 1;
  MAESTRO_RETURN_IF_ERROR(messages.ReplaceCurrent([&](const ByteSink& sink) -> Status {
    MAESTRO_RETURN_IF_ERROR(CopyRange(env, cur, 0, head_end, sink));
    MAESTRO_RETURN_IF_ERROR(sink(MessageLine(summary_msg)));
    return CopyRange(env, cur, tail_from, end, sink);
  }));
  out.tokens_after = messages.EstimatePromptTokens(tools_tokens);
  out.still_over_threshold = ShouldCompress(out.tokens_after);

  SummaryRecord rec;
  rec.start_seq = out.start_seq;
  rec.end_seq = out.end_seq;
  rec.summary = summary;
  rec.original_tokens = plan.original_tokens;
  rec.summary_tokens = EstimateMessageTokens(summary_msg);
  rec.ratio = plan.original_tokens > 0 ? static_cast<double>(rec.summary_tokens) /
                                             static_cast<double>(plan.original_tokens)
                                       : 0.0;
  rec.tokens_before = out.tokens_before;
  rec.tokens_after = out.tokens_after;
  rec.job_id = job_id;
  MAESTRO_ASSIGN_OR_RETURN(out.summary_id, summaries.Add(std::move(rec)));
  return out;
}

}  // namespace maestro::context
