#include "context/message_store.h"

#include <unordered_set>

namespace maestro::context {
namespace {

constexpr std::string_view kSystemLinePrefix = R"({"role":"system")";

// current.jsonl and transcript.jsonl are rewritten without fsync: Open
// rebuilds them from messages.jsonl, which was synced before they changed.
ReplaceOptions LiveFile() {
  ReplaceOptions o;
  o.durable = false;
  return o;
}

// What replaying messages.jsonl says current.jsonl must hold.
struct Replayed {
  std::vector<CurrentEntry> entries;
  int64_t threads = 0;
  int64_t raw_tokens = 0;  // sum of the archived estimates of `entries`
  Json summary_message;    // the message of the summary at entries[1], if any
  // The last thread: who started it, the movement it is in (the newest
  // `movement` field), and whether its seed was written whole.
  std::string thread_job_id;
  std::string movement;
  bool rewrites_transcript = false;  // seeded by SeedThread (one thread per file)
  int64_t seed_lines = 0;            // lines SeedThread wrote (0 = legacy start)
  bool seed_complete() const { return static_cast<int64_t>(entries.size()) >= seed_lines; }
};

Json ToMessage(const Json& record) {
  Json m = Json::object();
  for (const char* k : {"role", "content", "tool_calls", "tool_call_id", "name"}) {
    if (auto it = record.find(k); it != record.end()) m[k] = *it;
  }
  return m;
}

Result<Replayed> Replay(const JsonlLog& archive, bool want_summary) {
  Replayed r;
  std::vector<int64_t> tokens;  // parallel to entries
  Status st = archive.ForEach([&](const Json& rec) {
    std::string kind = rec.value("kind", "message");
    int64_t seq = rec.value("seq", int64_t{0});
    int64_t tok = rec.value("tokens", int64_t{0});
    if (kind == "thread_start") {
      ++r.threads;
      r.entries.assign(1, CurrentEntry{seq, seq, seq, false});
      tokens.assign(1, tok);
      r.summary_message = Json();
      r.thread_job_id = rec.value("job_id", "");
      r.movement = rec.value("movement", "");
      r.seed_lines = rec.value("seed_lines", int64_t{0});
      r.rewrites_transcript = rec.value("rewrites_transcript", false);
    } else if (kind == "summary") {
      size_t drop = static_cast<size_t>(rec.value("summarized_lines", int64_t{0}));
      if (r.entries.empty() || 1 + drop > r.entries.size()) return true;  // malformed: ignore
      r.entries.erase(r.entries.begin() + 1, r.entries.begin() + 1 + static_cast<long>(drop));
      tokens.erase(tokens.begin() + 1, tokens.begin() + 1 + static_cast<long>(drop));
      r.entries.insert(r.entries.begin() + 1, CurrentEntry{seq, rec.value("start_seq", seq),
                                                           rec.value("end_seq", seq), true});
      tokens.insert(tokens.begin() + 1, tok);
      if (want_summary) r.summary_message = ToMessage(rec);
    } else if (!r.entries.empty()) {
      r.entries.push_back(CurrentEntry{seq, seq, seq, false});
      tokens.push_back(tok);
      if (auto m = rec.find("movement"); m != rec.end() && m->is_string()) r.movement = *m;
    }
    return true;
  });
  MAESTRO_RETURN_IF_ERROR(st);
  for (int64_t t : tokens) r.raw_tokens += t;
  return r;
}

}  // namespace

std::string MessageLine(const Json& m, std::string_view content_json) {
  std::string s = "{\"role\":";
  s += DumpJson(m.value("role", Json("user")));
  s += ",\"content\":";
  if (content_json.empty()) {
    s += DumpJson(m.contains("content") ? m["content"] : Json(nullptr));
  } else {
    s += content_json;
  }
  for (const char* k : {"tool_calls", "tool_call_id", "name"}) {
    if (auto it = m.find(k); it != m.end() && !it->is_null()) {
      s += ",\"";
      s += k;
      s += "\":";
      s += DumpJson(*it);
    }
  }
  s += "}\n";
  return s;
}

Result<MessageStore> MessageStore::Open(const std::string& dir, Clock* clock, Env* env) {
  MessageStore ms;
  ms.clock_ = clock;
  ms.env_ = env;
  ms.current_path_ = dir + "/current.jsonl";
  ms.transcript_path_ = dir + "/" + kTranscriptFile;
  MAESTRO_ASSIGN_OR_RETURN(ms.archive_, JsonlLog::Open(*env, dir + "/messages.jsonl"));
  ms.repairs_.torn_bytes_cut = ms.archive_.open_info().torn_bytes_cut;
  MAESTRO_ASSIGN_OR_RETURN(uint64_t cut_cur, CutTornTail(*env, ms.current_path_));
  MAESTRO_ASSIGN_OR_RETURN(uint64_t cut_tr, CutTornTail(*env, ms.transcript_path_));
  ms.repairs_.torn_bytes_cut += cut_cur + cut_tr;

  MAESTRO_ASSIGN_OR_RETURN(Replayed want, Replay(ms.archive_, false));
  ms.thread_ = want.threads;
  ms.thread_job_id_ = want.thread_job_id;
  ms.movement_ = want.movement;
  MAESTRO_RETURN_IF_ERROR(ms.RecountCurrent());
  // The archive is the write-ahead log: a crash between its append and the
  // live files' leaves current.jsonl behind (or, mid-compression, ahead).
  if (static_cast<int64_t>(want.entries.size()) != ms.current_lines_ ||
      want.raw_tokens != ms.current_raw_tokens_) {
    MAESTRO_RETURN_IF_ERROR(ms.RebuildCurrentFromArchive());
    ms.repairs_.current_rebuilt = true;
  }
  if (!want.rewrites_transcript) {
    MAESTRO_RETURN_IF_ERROR(ms.LocateTranscriptThread());  // a transcript of older threads
  } else if (want.seed_complete()) {
    // The seed is whole in the archive: the transcript is exactly current.jsonl.
    ms.transcript_thread_offset_ = 0;
    MAESTRO_ASSIGN_OR_RETURN(uint64_t size, FileSize(*env, ms.transcript_path_));
    if (size != ms.current_bytes_) {
      MAESTRO_RETURN_IF_ERROR(ms.RebuildTranscriptTail());
      ms.repairs_.transcript_rebuilt = true;
    }
  } else {
    // A crash mid-seed: the transcript still holds the conversation before
    // the seed (it is rewritten only after the archive has the whole seed),
    // so the job's next run replays it again; nothing is lost or doubled.
    ms.seed_incomplete_ = true;
  }
  MAESTRO_ASSIGN_OR_RETURN(ms.current_, AppendFile::Open(*env, ms.current_path_));
  MAESTRO_ASSIGN_OR_RETURN(ms.transcript_, AppendFile::Open(*env, ms.transcript_path_));
  return ms;
}

Status MessageStore::RecountCurrent() {
  current_lines_ = 0;
  current_raw_tokens_ = 0;
  current_clean_ = false;
  last_line_user_ = adjacent_users_ = false;
  ++current_generation_;
  uint64_t line_bytes = 0;  // of the complete lines, newlines included
  bool blank_or_cr = false;
  MAESTRO_RETURN_IF_ERROR(ForEachLine(*env_, current_path_, [&](std::string_view line, uint64_t) {
    line_bytes += line.size() + 1;
    if (line.empty() || line.find('\r') != std::string_view::npos) blank_or_cr = true;
    if (line.empty()) return true;
    ++current_lines_;
    Json m = Json::parse(line, nullptr, false);
    current_raw_tokens_ += EstimateMessageTokens(m);
    NoteRole(m);
    return true;
  }));
  MAESTRO_ASSIGN_OR_RETURN(current_bytes_, FileSize(*env_, current_path_));
  current_clean_ = !blank_or_cr && line_bytes == current_bytes_;
  return Status::Ok();
}

Status MessageStore::RebuildCurrentFromArchive() {
  MAESTRO_ASSIGN_OR_RETURN(Replayed want, Replay(archive_, true));
  std::unordered_set<int64_t> keep;
  for (size_t i = 0; i < want.entries.size(); ++i) {
    if (!want.entries[i].is_summary) keep.insert(want.entries[i].seq);
  }
  int64_t first = want.entries.empty() ? -1 : want.entries[0].seq;
  MAESTRO_RETURN_IF_ERROR(ReplaceFile(
      *env_, current_path_,
      [&](const ByteSink& sink) {
        Status inner;
        MAESTRO_RETURN_IF_ERROR(archive_.ForEach([&](const Json& rec) {
          int64_t seq = rec.value("seq", int64_t{0});
          if (!keep.count(seq) || rec.value("kind", "message") == "summary") return true;
          inner = sink(MessageLine(ToMessage(rec)));
          // The summary sits right after the thread's system line.
          if (inner.ok() && seq == first && !want.summary_message.is_null()) {
            inner = sink(MessageLine(want.summary_message));
          }
          return inner.ok();
        }));
        return inner;
      },
      LiveFile()));
  return RecountCurrent();
}

Status MessageStore::LocateTranscriptThread() {
  int64_t threads = 0;
  uint64_t last = 0;
  MAESTRO_RETURN_IF_ERROR(
      ForEachLine(*env_, transcript_path_, [&](std::string_view line, uint64_t off) {
        if (line.substr(0, kSystemLinePrefix.size()) == kSystemLinePrefix) {
          ++threads;
          last = off;
        }
        return true;
      }));
  MAESTRO_ASSIGN_OR_RETURN(uint64_t size, FileSize(*env_, transcript_path_));
  // A crash inside StartThread can leave the new thread out of the transcript.
  transcript_thread_offset_ = threads < thread_ ? size : last;
  if (size - transcript_thread_offset_ != current_bytes_) {
    MAESTRO_RETURN_IF_ERROR(RebuildTranscriptTail());
    repairs_.transcript_rebuilt = true;
  }
  return Status::Ok();
}

Status MessageStore::RebuildTranscriptTail() {
  // ReplaceFile writes transcript.jsonl.tmp; the old transcript stays in
  // place (and readable) until the rename, so its prefix is copied from it.
  // Older threads in front (a transcript written before SeedThread) exist
  // only here, so such a rewrite is synced.
  uint64_t prefix = transcript_thread_offset_;
  return ReplaceFile(
      *env_, transcript_path_,
      [&](const ByteSink& sink) {
        MAESTRO_RETURN_IF_ERROR(CopyRange(*env_, transcript_path_, 0, prefix, sink));
        return CopyRange(*env_, current_path_, 0, current_bytes_, sink);
      },
      prefix > 0 ? ReplaceOptions() : LiveFile());
}

Json MessageStore::ArchiveRecord(const Json& message, const std::string& job_id,
                                 const std::string& kind) {
  Json rec = ToMessage(message);
  rec["kind"] = kind;
  rec["job_id"] = job_id;
  rec["thread"] = thread_;
  rec["timestamp"] = FormatIso8601(clock_->NowMs());
  rec["tokens"] = EstimateMessageTokens(message);
  return rec;
}

void MessageStore::NoteRole(const Json& message) {
  const bool user = message.is_object() && message.value("role", "") == "user";
  if (user && last_line_user_) adjacent_users_ = true;
  last_line_user_ = user;
}

Status MessageStore::AppendLive(const std::string& line) {
  if (Status st = current_.Append(line); !st.ok()) {
    current_clean_ = false;  // part of the line may be in the file
    return st;
  }
  MAESTRO_RETURN_IF_ERROR(transcript_.Append(line));
  current_bytes_ += line.size();
  return Status::Ok();
}

Result<int64_t> MessageStore::StartThread(const std::string& job_id, const Json& system_message) {
  return SeedThread(job_id, {system_message}, "");
}

Result<int64_t> MessageStore::SeedThread(const std::string& job_id,
                                         const std::vector<Json>& messages,
                                         const std::string& movement) {
  if (messages.empty() || messages.front().value("role", "") != "system") {
    return InvalidArgument("a thread starts with a system message", "role");
  }
  for (const Json& m : messages) {
    if (!m.is_object() || !m.contains("role")) {
      return InvalidArgument("a message is an object with a role", "role");
    }
  }
  // A context's first seed holds only what the job's next run would write
  // again (the piece's system text, the task's instruction, the dynamic
  // context): a power loss that takes it leaves an empty archive, and that
  // run starts afresh. So it is not synced (its fdatasync and its
  // directory's fsync took 0.8 of the 1.1 ms p50 between the job's tools
  // file and its first request, traced through serve). A later
  // seed marks where a job's thread starts and in which movement, which a
  // recovered run reads: its last line is synced, and with it every line
  // before it.
  const bool durable = archive_.count() > 0;
  ++thread_;
  // 1. The archive (write-ahead): the thread start says how many lines the
  //    seed has, so Open can tell a whole seed from a torn one.
  Json start = ArchiveRecord(messages.front(), job_id, "thread_start");
  start["seed_lines"] = static_cast<int64_t>(messages.size());
  start["rewrites_transcript"] = true;
  if (!movement.empty()) start["movement"] = movement;
  MAESTRO_ASSIGN_OR_RETURN(
      int64_t seq, archive_.Append(std::move(start), /*sync=*/durable && messages.size() == 1));
  std::string lines = MessageLine(messages.front());
  int64_t tokens = EstimateMessageTokens(messages.front());
  last_line_user_ = adjacent_users_ = false;
  NoteRole(messages.front());
  for (size_t i = 1; i < messages.size(); ++i) {
    Json rec = ArchiveRecord(messages[i], job_id, "message");
    tokens += rec["tokens"].get<int64_t>();
    MAESTRO_RETURN_IF_ERROR(
        archive_.Append(std::move(rec), /*sync=*/durable && i + 1 == messages.size()).status());
    lines += MessageLine(messages[i]);
    NoteRole(messages[i]);
  }
  // 2. The live files, each replaced whole (Conversation.rewrite): the
  //    transcript holds the seeded conversation once — the replayed turns
  //    are not appended after the threads they came from. A new context's
  //    are empty: appended to, no temp file and rename on its setup path.
  MAESTRO_ASSIGN_OR_RETURN(uint64_t transcript_bytes, FileSize(*env_, transcript_path_));
  current_clean_ = false;  // until the new lines are all in
  ++current_generation_;
  if (current_bytes_ == 0 && transcript_bytes == 0 && current_.is_open() && transcript_.is_open()) {
    MAESTRO_RETURN_IF_ERROR(current_.Append(lines));
    MAESTRO_RETURN_IF_ERROR(transcript_.Append(lines));
  } else {
    MAESTRO_RETURN_IF_ERROR(ReplaceFileContent(*env_, current_path_, lines, LiveFile()));
    MAESTRO_ASSIGN_OR_RETURN(current_, AppendFile::Open(*env_, current_path_));
    MAESTRO_RETURN_IF_ERROR(ReplaceFileContent(*env_, transcript_path_, lines, LiveFile()));
    MAESTRO_ASSIGN_OR_RETURN(transcript_, AppendFile::Open(*env_, transcript_path_));
  }
  transcript_thread_offset_ = 0;
  current_lines_ = static_cast<int64_t>(messages.size());
  current_bytes_ = lines.size();
  current_clean_ = true;  // MessageLine's lines only
  current_raw_tokens_ = tokens;
  thread_job_id_ = job_id;
  movement_ = movement;
  seed_incomplete_ = false;
  return seq;
}

Result<int64_t> MessageStore::AddMessage(const Json& message, const std::string& job_id,
                                         const std::string& tool_name,
                                         const std::string& movement) {
  if (current_lines_ == 0 || seed_incomplete_) {
    return Conflict("no thread started: call SeedThread first");
  }
  if (!message.is_object() || !message.contains("role")) {
    return InvalidArgument("a message is an object with a role", "role");
  }
  Json rec = ArchiveRecord(message, job_id, "message");
  if (!tool_name.empty()) rec["tool_name"] = tool_name;
  if (!movement.empty()) rec["movement"] = movement;
  int64_t tokens = rec["tokens"].get<int64_t>();
  // The content (a tool result can be tens of KB) is serialized once for the
  // archive and the live files; "content" sorts first among the record's keys.
  std::string content, member;
  if (auto it = rec.find("content"); it != rec.end()) {
    content = DumpJson(*it);
    member = "\"content\":" + content;
    rec.erase(it);
  }
  MAESTRO_ASSIGN_OR_RETURN(int64_t seq, archive_.Append(std::move(rec), /*sync=*/false, member));
  MAESTRO_RETURN_IF_ERROR(AppendLive(MessageLine(message, content)));
  ++current_lines_;
  NoteRole(message);
  current_raw_tokens_ += tokens;
  if (!movement.empty()) movement_ = movement;
  return seq;
}

Result<int64_t> MessageStore::ArchiveSummary(const Json& summary_message, const std::string& job_id,
                                             int64_t summarized_lines, int64_t start_seq,
                                             int64_t end_seq) {
  Json rec = ArchiveRecord(summary_message, job_id, "summary");
  rec["summarized_lines"] = summarized_lines;
  rec["start_seq"] = start_seq;
  rec["end_seq"] = end_seq;
  return archive_.Append(std::move(rec), /*sync=*/true);
}

Status MessageStore::ReplaceCurrent(const std::function<Status(const ByteSink&)>& write) {
  MAESTRO_RETURN_IF_ERROR(ReplaceFile(*env_, current_path_, write, LiveFile()));
  MAESTRO_ASSIGN_OR_RETURN(current_, AppendFile::Open(*env_, current_path_));
  MAESTRO_RETURN_IF_ERROR(RecountCurrent());
  MAESTRO_RETURN_IF_ERROR(RebuildTranscriptTail());
  MAESTRO_ASSIGN_OR_RETURN(transcript_, AppendFile::Open(*env_, transcript_path_));
  return Status::Ok();
}

Result<std::vector<CurrentEntry>> MessageStore::CurrentEntries() const {
  MAESTRO_ASSIGN_OR_RETURN(Replayed r, Replay(archive_, false));
  return std::move(r.entries);
}

int64_t MessageStore::EstimatePromptTokens(int64_t tools_tokens) const {
  return calibration_.Apply(current_raw_tokens_ + tools_tokens + kReplyPrimingTokens);
}

void MessageStore::ObserveUsage(int64_t prompt_tokens, int64_t tools_tokens) {
  calibration_.Observe(current_raw_tokens_ + tools_tokens + kReplyPrimingTokens, prompt_tokens);
}

}  // namespace maestro::context
