#include "engine/prompt/role_alternation.h"

#include <string_view>

#include "context/message_store.h"
#include "core/durable_file.h"

namespace maestro::engine {
namespace {

constexpr std::string_view kSeparator = "\n\n";
// How MessageLine starts a user line: the cheap test before any parse.
constexpr std::string_view kUserLinePrefix = "{\"role\":\"user\"";

bool IsUser(const Json& m) { return m.is_object() && m.value("role", "") == "user"; }

// A content value as content parts.
Json AsParts(const Json& content) {
  if (content.is_array()) return content;
  Json parts = Json::array();
  if (content.is_string()) parts.push_back({{"type", "text"}, {"text", content}});
  return parts;
}

Json MergeContent(const Json& a, const Json& b) {
  if (a.is_null() || (a.is_string() && a.get_ref<const std::string&>().empty())) return b;
  if (b.is_null() || (b.is_string() && b.get_ref<const std::string&>().empty())) return a;
  if (a.is_string() && b.is_string()) {
    return a.get<std::string>() + std::string(kSeparator) + b.get<std::string>();
  }
  Json parts = AsParts(a);
  Json tail = AsParts(b);
  size_t from = 0;
  if (!parts.empty() && !tail.empty() && parts.back().value("type", "") == "text" &&
      tail.front().value("type", "") == "text") {
    parts.back()["text"] =
        parts.back().value("text", "") + std::string(kSeparator) + tail.front().value("text", "");
    from = 1;
  }
  for (size_t i = from; i < tail.size(); ++i) parts.push_back(tail[i]);
  return parts;
}

}  // namespace

Json MergeUserMessages(const Json& first, const Json& second) {
  Json merged = first;
  merged["content"] = MergeContent(first.value("content", Json()), second.value("content", Json()));
  return merged;
}

int MergeAdjacentUserMessages(std::vector<Json>& messages) {
  std::vector<Json> out;
  out.reserve(messages.size());
  int merged = 0;
  for (auto& m : messages) {
    if (!out.empty() && IsUser(out.back()) && IsUser(m)) {
      out.back() = MergeUserMessages(out.back(), m);
      ++merged;
      continue;
    }
    out.push_back(std::move(m));
  }
  messages = std::move(out);
  return merged;
}

bool HasAdjacentUserMessages(const std::vector<Json>& messages) {
  for (size_t i = 1; i < messages.size(); ++i) {
    if (IsUser(messages[i - 1]) && IsUser(messages[i])) return true;
  }
  return false;
}

Result<uint64_t> WriteAlternatingCopy(Env& env, const std::string& in_path,
                                      const std::string& out_path) {
  uint64_t bytes = 0;
  ReplaceOptions not_synced;
  not_synced.durable = false;
  MAESTRO_RETURN_IF_ERROR(ReplaceFile(
      env, out_path,
      [&](const ByteSink& sink) {
        Json pending;              // the run of user messages merged so far
        std::string pending_line;  // its line while the run is one message long
        Status inner;
        auto put = [&](std::string_view s) {
          if (inner.ok()) inner = sink(s);
          bytes += s.size();
        };
        auto flush = [&] {
          if (pending.is_null()) return;
          if (pending_line.empty()) pending_line = context::MessageLine(pending);
          put(pending_line);
          pending = Json();
          pending_line.clear();
        };
        MAESTRO_RETURN_IF_ERROR(ForEachLine(env, in_path, [&](std::string_view line, uint64_t) {
          if (line.empty()) return true;
          if (line.substr(0, kUserLinePrefix.size()) != kUserLinePrefix) {
            flush();
            put(line);
            put("\n");
            return inner.ok();
          }
          Json m = Json::parse(line, nullptr, /*allow_exceptions=*/false);
          if (m.is_discarded()) {  // not ours to judge: sent as it is
            flush();
            put(line);
            put("\n");
          } else if (pending.is_null()) {
            pending = std::move(m);
            pending_line = std::string(line) + "\n";  // byte for byte unless merged
          } else {
            pending = MergeUserMessages(pending, m);
            pending_line.clear();
          }
          return inner.ok();
        }));
        flush();
        return inner;
      },
      not_synced));
  return bytes;
}

}  // namespace maestro::engine
