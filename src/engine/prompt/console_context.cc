#include "engine/prompt/console_context.h"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <vector>

#include "context/ledger.h"
#include "context/record_stores.h"
#include "core/durable_file.h"
#include "core/json.h"
#include "core/utf8.h"
#include "tools/tool_names.h"

namespace maestro::engine {
namespace {

// One RunCommand call to show.
struct ConsoleCall {
  std::string job_id;
  std::string call_id;
  std::string command;
  std::string text;  // its result (or error) as the ledger keeps it
  bool ran = true;   // false: an error record (the sandbox did not start)
  bool from_ledger = true;
};

bool IsCommandEndLine(std::string_view line) {
  return line.rfind("[exit code ", 0) == 0 || line.rfind("[timed out", 0) == 0 ||
         line.rfind("[cancelled", 0) == 0;
}

std::vector<std::string_view> SplitConsoleLines(std::string_view text) {
  std::vector<std::string_view> out;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    out.push_back(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
  }
  return out;
}

// The command on one line, cut.
std::string ConsoleCommandLine(const std::string& command, size_t max) {
  std::string flat = TerminalText(command);
  for (char& c : flat) {
    if (c == '\n' || c == '\t') c = ' ';
  }
  std::string_view cut = Utf8Prefix(flat, max);
  return cut.size() < flat.size() ? std::string(cut) + "…" : flat;
}

// "$ command", how it ended, then the tail of its output.
std::string RenderConsoleCall(const ConsoleCall& c, const ConsoleLimits& limits) {
  std::string out = "$ " + ConsoleCommandLine(c.command, limits.max_command_bytes) + "\n";
  const std::string text = TerminalText(c.text);
  std::vector<std::string_view> lines = SplitConsoleLines(text);
  // The lines up to the one saying how it ended (a limit's diagnosis comes
  // first) are the status; the rest is the output.
  size_t body = 0;
  for (size_t i = 0; i < lines.size() && i < 4; ++i) {
    if (IsCommandEndLine(lines[i])) body = i + 1;
  }
  if (body == 0 && !c.ran) out += "[the command did not run]\n";
  for (size_t i = 0; i < body; ++i) {
    std::string_view l = Utf8Prefix(lines[i], 300);
    out += std::string(l) + (l.size() < lines[i].size() ? "…" : "") + "\n";
  }
  while (lines.size() > body && lines.back().empty()) lines.pop_back();
  size_t from =
      std::max(body, lines.size() > limits.max_lines ? lines.size() - limits.max_lines : size_t{0});
  size_t bytes = 0;
  for (size_t i = lines.size(); i > from; --i) {
    bytes += lines[i - 1].size() + 1;
    if (bytes > limits.max_bytes) {
      from = i;
      break;
    }
  }
  std::string tail;
  for (size_t i = from; i < lines.size(); ++i) tail += std::string(lines[i]) + "\n";
  // The newest line alone is longer than the whole budget: its end.
  if (tail.empty() && lines.size() > body) {
    std::string_view last = lines.back();
    size_t cut = last.size() > limits.max_bytes ? last.size() - limits.max_bytes : 0;
    while (cut < last.size() && (static_cast<unsigned char>(last[cut]) & 0xC0) == 0x80) ++cut;
    tail = "…" + std::string(last.substr(cut)) + "\n";
    from = lines.size() - 1;
  }
  if (from > body) out += fmt::format("[… {} earlier lines not shown]\n", from - body);
  out += tail;
  if (c.from_ledger && c.text.size() > tools::kLedgerResultBytes) {
    out += fmt::format("[the ledger kept only the first {} bytes of this output]\n",
                       tools::kLedgerResultBytes);
  }
  if (body == lines.size() && body > 0) out += "(no output)\n";
  return out;
}

// The longest run of backticks in `text`.
size_t LongestBacktickRun(std::string_view text) {
  size_t best = 0, run = 0;
  for (char ch : text) {
    run = ch == '`' ? run + 1 : 0;
    best = std::max(best, run);
  }
  return best;
}

// The archived tool results of `calls` (messages.jsonl: what the model got).
Status FillConsoleFromArchive(Env& env, const std::string& archive,
                              std::vector<ConsoleCall>& calls) {
  std::vector<std::string> needles;
  for (const ConsoleCall& c : calls)
    needles.push_back("\"tool_call_id\":" + DumpJson(Json(c.call_id)));
  return ForEachLine(env, archive, [&](std::string_view line, uint64_t) {
    for (size_t k = 0; k < calls.size(); ++k) {
      // Most lines are other messages: skipped unparsed (a result can be large).
      if (line.find(needles[k]) == std::string_view::npos) continue;
      if (line.find(calls[k].job_id) == std::string_view::npos) continue;
      Json rec = Json::parse(line, nullptr, /*allow_exceptions=*/false);
      if (!rec.is_object() || rec.value("role", "") != "tool" ||
          rec.value("job_id", "") != calls[k].job_id ||
          rec.value("tool_call_id", "") != calls[k].call_id) {
        continue;
      }
      if (auto content = rec.find("content"); content != rec.end() && content->is_string()) {
        calls[k].text = content->get<std::string>();
        calls[k].from_ledger = false;
      }
    }
    return true;
  });
}

}  // namespace

std::string TerminalText(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t line_start = 0;   // in `out`: where a carriage return goes back to
  bool overwrite = false;  // a carriage return came: the next text replaces the line
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == 0x1b) {  // ESC: skip the escape sequence
      if (i + 1 < text.size() && text[i + 1] == '[') {
        size_t j = i + 2;
        while (j < text.size() && static_cast<unsigned char>(text[j]) >= 0x20 &&
               static_cast<unsigned char>(text[j]) <= 0x3f) {
          ++j;
        }
        i = j < text.size() ? j : text.size() - 1;  // the final byte
      } else if (i + 1 < text.size() && text[i + 1] == ']') {
        size_t j = i + 2;  // OSC: up to BEL or ESC '\'
        while (j < text.size() && text[j] != '\a' && text[j] != '\x1b') ++j;
        if (j + 1 < text.size() && text[j] == '\x1b' && text[j + 1] == '\\') ++j;
        i = j < text.size() ? j : text.size() - 1;
      } else {
        ++i;  // a two-byte escape
      }
      continue;
    }
    if (c == '\r') {
      if (i + 1 < text.size() && text[i + 1] == '\n') continue;  // CRLF
      overwrite = true;
      continue;
    }
    if (c == '\n') {
      overwrite = false;
      out += '\n';
      line_start = out.size();
      continue;
    }
    if (overwrite) {  // what follows overwrites the line, as on a terminal
      out.resize(line_start);
      overwrite = false;
    }
    if (c == '\t' || c >= 0x20) {
      if (c != 0x7f) {
        out += static_cast<char>(c);
        continue;
      }
    }
    out += fmt::format("\\x{:02x}", c);
  }
  return ValidUtf8(out);
}

Result<std::string> ConsoleContextText(Env& env, const std::string& ledger_dir,
                                       const std::string& archive_path,
                                       const ConsoleLimits& limits) {
  if (limits.max_commands == 0) return std::string();
  std::deque<ConsoleCall> newest;
  context::ToolStore tools(ledger_dir, &env);
  MAESTRO_RETURN_IF_ERROR(tools.ForEach([&](const context::ToolCallRecord& r) {
    if (r.tool != tools::kRunCommand) return true;
    ConsoleCall c;
    c.job_id = r.job_id;
    c.call_id = r.call_id;
    if (r.args.is_object() && r.args.contains("command") && r.args["command"].is_string()) {
      c.command = r.args["command"].get<std::string>();
    }
    c.ran = r.status == "success" || r.error.find("[exit code ") != std::string::npos ||
            r.error.find("[timed out") != std::string::npos;
    c.text = r.status == "success" ? r.result : r.error;
    newest.push_back(std::move(c));
    if (newest.size() > limits.max_commands) newest.pop_front();
    return true;
  }));
  if (newest.empty()) return std::string();
  std::vector<ConsoleCall> calls(std::make_move_iterator(newest.begin()),
                                 std::make_move_iterator(newest.end()));
  // The archive is read (a scan of the whole task's conversation) only when
  // the ledger cut an output; an unreadable one leaves the ledger's text:
  // still the output (its head).
  bool cut = false;
  for (const ConsoleCall& c : calls) cut = cut || c.text.size() > tools::kLedgerResultBytes;
  if (cut) FillConsoleFromArchive(env, archive_path, calls).IgnoreError();
  std::string body;
  for (const ConsoleCall& c : calls) body += RenderConsoleCall(c, limits);
  while (!body.empty() && body.back() == '\n') body.pop_back();
  const std::string fence(std::max<size_t>(3, LongestBacktickRun(body) + 1), '`');
  return fence + "\n" + body + "\n" + fence;
}

}  // namespace maestro::engine
