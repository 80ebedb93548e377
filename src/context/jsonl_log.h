// JsonlLog: an append-only JSON Lines file whose records carry a sequence
// number — the shape shared by messages.jsonl, summaries.jsonl and
// events.jsonl (seed 002). (tools.jsonl is the tools ledger's own file,
// context/ledger.h.)
//
// Open() makes one pass over the file: it cuts a torn last line (a crash in
// the middle of an append), counts the records and remembers the next
// sequence number. After that Append() is O(1): it stamps `seq_field` with
// the next number and writes one line with one write(2); nothing is rescanned
// and no record is kept in memory. Reading (ForEach) streams the file.
//
// Thread safety: one writer (the thread running the task's job, seed 002's
// "one task = one process"); not internally synchronised.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "core/durable_file.h"
#include "core/env.h"
#include "core/json.h"
#include "core/status.h"

namespace maestro::context {

class JsonlLog {
 public:
  struct OpenInfo {
    uint64_t torn_bytes_cut = 0;  // > 0: a torn last line was removed
    int64_t records = 0;
  };

  // Opens (creating) `path` through `env`, which must outlive the log.
  // `seq_field` names the sequence field ("seq" or "id"); sequence numbers
  // start at 1.
  static Result<JsonlLog> Open(Env& env, const std::string& path, std::string seq_field = "seq");

  JsonlLog() = default;
  JsonlLog(JsonlLog&&) = default;
  JsonlLog& operator=(JsonlLog&&) = default;

  // Stamps record[seq_field] = next seq, appends it and returns the seq.
  // `record` must be an object. With `sync`, fdatasync before returning.
  // `first_member`, when given, is an already serialized `"key":value`
  // written as the object's first member (a message's large content,
  // serialized once for two files); its key should sort before the record's
  // keys so the line keeps the usual key order.
  Result<int64_t> Append(Json record, bool sync = false, std::string_view first_member = {});

  // Streams every complete record; unparsable lines are skipped (counted in
  // the return value's second member would be overkill: they cannot occur
  // after Open's cut, short of outside edits).
  Status ForEach(const std::function<bool(const Json& record)>& fn) const;

  int64_t next_seq() const { return next_seq_; }
  int64_t count() const { return count_; }
  const OpenInfo& open_info() const { return open_info_; }
  const std::string& path() const { return file_.path(); }

 private:
  Env* env_ = nullptr;
  AppendFile file_;
  std::string seq_field_;
  int64_t next_seq_ = 1;
  int64_t count_ = 0;
  OpenInfo open_info_;
};

// One compact JSON line (with the trailing '\n') for `value`. Invalid UTF-8
// is replaced rather than thrown on, so a tool's binary output can't abort a
// task.
std::string JsonLine(const Json& value);

}  // namespace maestro::context
