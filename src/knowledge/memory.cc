#include "knowledge/memory.h"

#include <fmt/format.h>

#include <map>
#include <set>

#include "core/hash.h"
#include "core/json.h"

namespace maestro::knowledge {

namespace {

constexpr size_t kMaxTopic = 64;
constexpr size_t kMaxText = 4'000;
constexpr size_t kMaxLog = 4 << 20;  // a log bigger than this is read only this far
constexpr size_t kMaxOwnerComponent = 128;

}  // namespace

std::string OwnerPathComponent(const std::string& owner) {
  if (owner.empty()) return "~none";
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : owner) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
        c == '_') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  // A hashed name starts with '~', which the escape never writes: the two
  // forms cannot meet.
  return out.size() <= kMaxOwnerComponent ? out : "~" + Sha256Hex(owner);
}

std::string OwnerMemoryDir(const std::string& data_dir, const std::string& owner) {
  return data_dir + "/memory/~users/" + OwnerPathComponent(owner);
}

std::string SpaceMemoryDir(const std::string& data_dir, const std::string& space) {
  // Space names are checked by the config (letters, digits, - _ .); "." and
  // ".." would still name a folder above the space's, so they have none.
  if (space.empty() || space.find_first_not_of('.') == std::string::npos ||
      space.find('/') != std::string::npos) {
    return "";
  }
  return data_dir + "/memory/" + space;
}

std::string MemoryDir(const std::string& data_dir, const std::string& space,
                      const std::string& owner) {
  return space.empty() ? OwnerMemoryDir(data_dir, owner) : SpaceMemoryDir(data_dir, space);
}

Result<std::vector<MemoryNote>> ReadMemory(Env& env, const std::string& dir) {
  std::vector<MemoryNote> out;
  if (dir.empty()) return InvalidArgument("no memory folder", "dir");
  auto text = ReadFileToString(env, dir + "/log.jsonl");
  if (!text.ok()) {
    if (text.status().code() == StatusCode::kNotFound) return out;
    return text.status();
  }
  size_t pos = 0;
  const std::string& t = *text;
  while (pos < t.size() && pos < kMaxLog) {
    size_t nl = t.find('\n', pos);
    if (nl == std::string::npos) break;  // a torn last line
    Json j = Json::parse(std::string_view(t).substr(pos, nl - pos), nullptr, false);
    pos = nl + 1;
    if (!j.is_object() || !j.value("topic", Json()).is_string() ||
        !j.value("text", Json()).is_string()) {
      continue;
    }
    MemoryNote n;
    n.at = j.value("at", TimeMs{0});
    n.topic = j["topic"].get<std::string>();
    n.text = j["text"].get<std::string>();
    n.task_id = j.value("task_id", "");
    out.push_back(std::move(n));
  }
  return out;
}

Status AppendMemory(Env& env, const std::string& dir, const MemoryNote& note) {
  if (note.topic.empty() || note.topic.size() > kMaxTopic ||
      note.topic.find_first_of("\n\r") != std::string::npos) {
    return InvalidArgument(fmt::format("topic must be one line of 1-{} characters", kMaxTopic),
                           "topic");
  }
  if (note.text.empty() || note.text.size() > kMaxText) {
    return InvalidArgument(fmt::format("text must be 1-{} characters", kMaxText), "text");
  }
  if (dir.empty()) return InvalidArgument("no memory folder", "dir");
  MAESTRO_RETURN_IF_ERROR(env.CreateDirs(dir));
  Json line = {
      {"at", note.at}, {"topic", note.topic}, {"text", note.text}, {"task_id", note.task_id}};
  {
    MAESTRO_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> f,
                             env.NewAppendableFile(dir + "/log.jsonl"));
    MAESTRO_RETURN_IF_ERROR(f->Append(DumpJson(line) + "\n"));
    MAESTRO_RETURN_IF_ERROR(f->Close());
  }
  MAESTRO_ASSIGN_OR_RETURN(std::vector<MemoryNote> notes, ReadMemory(env, dir));
  // The view is derived: a crash before the rename leaves the old one, the
  // next append rewrites it from the log. No fsync needed.
  const std::string tmp = dir + "/MEMORY.md.tmp";
  MAESTRO_RETURN_IF_ERROR(WriteStringToFile(env, tmp, MemoryView(notes)));
  return env.RenameFile(tmp, dir + "/MEMORY.md");
}

std::string MemoryIndexText(const std::vector<MemoryNote>& notes) {
  std::set<std::string> topics;
  for (const MemoryNote& n : notes) topics.insert(n.topic);
  std::string out;
  for (const std::string& t : topics) out += "- " + t + "\n";
  if (!out.empty()) {
    out +=
        "Read a topic's notes with Memory {\"action\": \"read\", \"topic\": ...}; add what "
        "later tasks in this space should know with {\"action\": \"append\"}.";
  }
  return out;
}

std::string MemoryView(const std::vector<MemoryNote>& notes, const std::string& topic) {
  std::map<std::string, std::vector<const MemoryNote*>> by_topic;
  for (const MemoryNote& n : notes) {
    if (topic.empty() || n.topic == topic) by_topic[n.topic].push_back(&n);
  }
  std::string out;
  for (const auto& [t, list] : by_topic) {
    out += (out.empty() ? "" : "\n") + std::string("## ") + t + "\n";
    for (const MemoryNote* n : list) out += "- " + n->text + "\n";
  }
  return out;
}

}  // namespace maestro::knowledge
