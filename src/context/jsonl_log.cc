#include "context/jsonl_log.h"

namespace maestro::context {

std::string JsonLine(const Json& value) {
  std::string s = value.dump(-1, ' ', false, Json::error_handler_t::replace);
  s.push_back('\n');
  return s;
}

Result<JsonlLog> JsonlLog::Open(Env& env, const std::string& path, std::string seq_field) {
  JsonlLog log;
  log.env_ = &env;
  log.seq_field_ = std::move(seq_field);
  MAESTRO_ASSIGN_OR_RETURN(log.open_info_.torn_bytes_cut, CutTornTail(env, path));
  // One scan: the last record's seq gives the next one; counting lines is
  // cheap and lets callers report sizes without rescanning.
  int64_t max_seq = 0;
  Status st = ForEachLine(env, path, [&](std::string_view line, uint64_t) {
    if (line.empty()) return true;
    ++log.count_;
    Json j = Json::parse(line, nullptr, false);
    if (j.is_object()) {
      auto it = j.find(log.seq_field_);
      if (it != j.end() && it->is_number_integer()) max_seq = std::max(max_seq, it->get<int64_t>());
    }
    return true;
  });
  MAESTRO_RETURN_IF_ERROR(st);
  log.next_seq_ = max_seq + 1;
  log.open_info_.records = log.count_;
  MAESTRO_ASSIGN_OR_RETURN(log.file_, AppendFile::Open(env, path));
  return log;
}

Result<int64_t> JsonlLog::Append(Json record, bool sync, std::string_view first_member) {
  if (!record.is_object()) return InvalidArgument("a JSONL record must be an object");
  int64_t seq = next_seq_;
  record[seq_field_] = seq;
  std::string line = JsonLine(record);  // "{...}\n", never "{}": it holds the seq
  if (!first_member.empty()) line.insert(1, std::string(first_member) + ",");
  MAESTRO_RETURN_IF_ERROR(file_.Append(line, sync));
  ++next_seq_;
  ++count_;
  return seq;
}

Status JsonlLog::ForEach(const std::function<bool(const Json&)>& fn) const {
  return ForEachLine(*env_, file_.path(), [&](std::string_view line, uint64_t) {
    if (line.empty()) return true;
    Json j = Json::parse(line, nullptr, false);
    if (j.is_discarded()) return true;
    return fn(j);
  });
}

}  // namespace maestro::context
