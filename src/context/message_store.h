// MessageStore: the conversation of a task, kept in files (seed 002).
//
// Where it sits: the agent loop appends every message here (system prompt,
// user instruction, assistant replies, tool results) and hands
// current_path() to the LLM client, which streams it as the request's
// `messages` (src/llm/request_body.h). Three files, one source of truth:
//   messages.jsonl   append-only archive and write-ahead log: every message
//                    ever, with seq, job id, thread, role, timestamp, token
//                    estimate, tool_name; thread starts and summaries too.
//   current.jsonl    the live context: exactly the request `messages`, one
//                    OpenAI message object per line, nothing else.
//   transcript.jsonl seed 000's transcript, the source a new job replays:
//                    the conversation once. SeedThread rewrites it whole
//                    (Conversation.rewrite) to the seeded conversation, so a
//                    replayed turn is never appended after the thread it came
//                    from; later turns append. It is then byte-identical to
//                    current.jsonl. (A transcript written before this rule
//                    holds several threads; the first seed collapses them.)
// Appends go archive -> current -> transcript, each one write(2). On Open a
// torn last line is cut from each file, and if a crash fell between the
// appends the live files are rebuilt from the archive (current.jsonl) and
// from current.jsonl (the transcript), so they never diverge. A seed goes
// archive (whole, fsynced) -> current -> transcript; a crash before the
// archive holds the whole seed leaves the transcript as it was before it
// (seed_incomplete(): the job must seed again), so replay loses nothing.
//
// The archive also records the movement the conversation is in (at the
// seed and at each transition's guidance message): a job that crashed in
// `implement` resumes in `implement` — the movement and the conversation
// step are one write.
//
// Memory: O(1) in the conversation size — a few counters (line count, raw
// token total, byte offset of the transcript's last thread). Compression
// (ReplaceCurrent) rewrites through temp file + fsync + rename.
//
// Thread safety: one owner thread (the job's worker thread).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "context/jsonl_log.h"
#include "context/token_estimate.h"
#include "core/clock.h"
#include "core/durable_file.h"
#include "core/env.h"
#include "core/json.h"

namespace maestro::context {

// The transcript's file name in a task's context dir.
inline constexpr char kTranscriptFile[] = "transcript.jsonl";

// One line of current.jsonl as it maps to the archive: a message (lo == hi
// == seq) or a summary standing for the messages lo..hi.
struct CurrentEntry {
  int64_t seq = 0;
  int64_t lo = 0;
  int64_t hi = 0;
  bool is_summary = false;
};

// The compact OpenAI-format line (with '\n') for a message: "role" and
// "content" first, then tool_calls / tool_call_id / name; other fields are
// dropped so the line is exactly what the request needs.
// `content_json`, when given, is message["content"] already serialized.
std::string MessageLine(const Json& message, std::string_view content_json = {});

class MessageStore {
 public:
  struct Repairs {
    uint64_t torn_bytes_cut = 0;      // summed over the three files
    bool current_rebuilt = false;     // from the archive
    bool transcript_rebuilt = false;  // last thread re-copied from current.jsonl
  };

  // Opens the three files in `dir` (created if missing) and repairs them.
  // Every file operation goes through `env` (not owned; outlives the store).
  static Result<MessageStore> Open(const std::string& dir, Clock* clock, Env* env = Env::Default());

  MessageStore() = default;
  MessageStore(MessageStore&&) = default;
  MessageStore& operator=(MessageStore&&) = default;

  // Begins a new conversation (a job's seed, a handoff continuation, a
  // delegate): archives `messages` (messages[0] the system message, as the
  // thread start) and replaces current.jsonl and transcript.jsonl with them
  // (not synced: rebuilt from the archive on open). The seed's last archive
  // line is fdatasynced unless it is the archive's first seed (see the .cc).
  // `movement` is the movement the thread starts in ("" = not tracked).
  // Returns the thread start's seq.
  Result<int64_t> SeedThread(const std::string& job_id, const std::vector<Json>& messages,
                             const std::string& movement);
  // SeedThread with the system message alone.
  Result<int64_t> StartThread(const std::string& job_id, const Json& system_message);

  // Appends one message of the running thread. `tool_name` is archived for
  // role=tool (seed 002); it is not sent. `movement`, when set, records that
  // the conversation enters that movement with this message (a transition's
  // guidance). Returns its seq.
  Result<int64_t> AddMessage(const Json& message, const std::string& job_id,
                             const std::string& tool_name = {}, const std::string& movement = {});

  // Archives a summary record (kind=summary) standing for current lines
  // [1, 1 + summarized_lines) and returns its seq. The caller then writes
  // the new current.jsonl with ReplaceCurrent. Used by ContextCompressor.
  Result<int64_t> ArchiveSummary(const Json& summary_message, const std::string& job_id,
                                 int64_t summarized_lines, int64_t start_seq, int64_t end_seq);

  // Rewrites current.jsonl with `write` (temp + fsync + rename), then the
  // transcript's last thread to match, and recounts lines and tokens.
  Status ReplaceCurrent(const std::function<Status(const ByteSink&)>& write);

  // The archive seqs of current.jsonl's lines, in line order (replayed from
  // messages.jsonl; O(lines) memory, for compression only).
  Result<std::vector<CurrentEntry>> CurrentEntries() const;

  // The prompt estimate for the next call: current messages + `tools_tokens`
  // + reply priming, scaled by the calibration.
  int64_t EstimatePromptTokens(int64_t tools_tokens) const;
  // After a call: the server said the prompt was `prompt_tokens`. REQUIRES:
  // called before the reply is appended (the estimate must be of the prompt).
  void ObserveUsage(int64_t prompt_tokens, int64_t tools_tokens);

  Env& env() const { return *env_; }
  const std::string& current_path() const { return current_path_; }
  const std::string& transcript_path() const { return transcript_path_; }
  const std::string& messages_path() const { return archive_.path(); }
  int64_t current_lines() const { return current_lines_; }
  // The bytes of current.jsonl when the store knows its exact shape: every
  // one of current_lines() lines non-empty, newline-terminated and free of
  // '\r' (what MessageLine writes). The LLM request body then takes its
  // size from here instead of scanning the whole conversation before every
  // call (llm::ChatRequest::messages_known_bytes). 0 = not known (a recount
  // found another shape, or an append failed part-way).
  uint64_t current_known_bytes() const { return current_clean_ ? current_bytes_ : 0; }
  // Changes whenever current.jsonl is rewritten rather than appended to (a
  // seed, a compression, a repair): a reader that kept an offset into it
  // starts over.
  uint64_t current_generation() const { return current_generation_; }
  int64_t current_raw_tokens() const { return current_raw_tokens_; }
  // current.jsonl holds two user messages in a row (appended one after the
  // other while a job runs): the agent loop then sends an alternating copy
  // (engine/prompt/role_alternation.h). Cleared when the file is rewritten
  // without such a pair (a seed, which is merged, or a compression).
  bool has_adjacent_user_messages() const { return adjacent_users_; }
  int64_t count_messages() const { return archive_.count(); }
  int64_t thread() const { return thread_; }
  // The job that started the newest thread ("" = none): a job that finds its
  // own id here ran before (a retry, a resume after a park, a recovery).
  const std::string& thread_job_id() const { return thread_job_id_; }
  // The newest recorded movement of the newest thread ("" = none recorded).
  const std::string& movement() const { return movement_; }
  // A crash fell inside the newest thread's seed (see above).
  bool seed_incomplete() const { return seed_incomplete_; }
  const TokenCalibration& calibration() const { return calibration_; }
  const Repairs& repairs() const { return repairs_; }

 private:
  Status AppendLive(const std::string& line);
  void NoteRole(const Json& message);  // tracks has_adjacent_user_messages()
  Status RecountCurrent();
  Status RebuildCurrentFromArchive();
  Status RebuildTranscriptTail();
  Status LocateTranscriptThread();
  Json ArchiveRecord(const Json& message, const std::string& job_id, const std::string& kind);

  Clock* clock_ = nullptr;
  Env* env_ = nullptr;
  JsonlLog archive_;
  AppendFile current_;
  AppendFile transcript_;
  std::string current_path_, transcript_path_;
  int64_t current_lines_ = 0;
  int64_t current_raw_tokens_ = 0;
  uint64_t current_bytes_ = 0;
  bool current_clean_ = false;   // see current_known_bytes()
  bool last_line_user_ = false;  // current.jsonl's last message is role=user
  bool adjacent_users_ = false;  // see has_adjacent_user_messages()
  uint64_t current_generation_ = 0;
  uint64_t transcript_thread_offset_ = 0;  // where the last thread starts
  int64_t thread_ = 0;                     // number of thread starts so far
  std::string thread_job_id_;
  std::string movement_;
  bool seed_incomplete_ = false;
  TokenCalibration calibration_;
  Repairs repairs_;
};

}  // namespace maestro::context
