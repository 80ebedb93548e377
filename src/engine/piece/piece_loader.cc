#include "engine/piece/piece_loader.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "core/json.h"
#include "engine/piece/piece_checks.h"
#include "tools/tool_names.h"

namespace maestro::engine {

std::string PieceProblem::ToString() const {
  if (line <= 0) return fmt::format("{}: {}", file, message);
  return fmt::format("{}:{}:{}: {}", file, line, column, message);
}

std::vector<std::string> PieceLintOptions::DefaultToolNames() {
  return {tools::kReadFile,
          tools::kWriteFile,
          tools::kEditFile,
          tools::kListDir,
          tools::kGlob,
          tools::kGrep,
          tools::kRunCommand,
          tools::kDelegate,
          tools::kRequestTool,
          tools::kRequestPackage,
          tools::kWaitSubTask,
          tools::kSpinOffTask,
          tools::kWriteHandoff,
          tools::kComplete,
          tools::kTransition,
          tools::kBrowseWeb,
          tools::kRequestCaptchaHelp,
          tools::kRunRemote};
}

namespace {

const std::vector<std::string> kPieceKeys = {"name",          "description", "initial_movement",
                                             "max_movements", "movements",   "loop_monitors",
                                             "checklist"};
const std::vector<std::string> kMovementKeys = {
    "name",      "description",   "guidance", "instruction", "persona",      "policy",
    "knowledge", "allowed_tools", "edit",     "rules",       "default_next", "max_iterations"};
const std::vector<std::string> kRuleKeys = {"condition", "next"};
const std::vector<std::string> kMonitorKeys = {"cycle", "threshold", "warning", "on_exceed"};
const std::vector<std::string> kTextKeys = {"file", "text"};

SourcePos PosOf(const YAML::Node& n) {
  YAML::Mark m = n.Mark();
  if (m.is_null()) return {};
  return {m.line + 1, m.column + 1};
}

// The YAML walk: fills a Piece and collects problems. Semantic checks that
// need the whole piece live in piece_checks.cc.
class Walker {
 public:
  Walker(std::string source, std::string base_dir, const PieceLintOptions& opts)
      : source_(std::move(source)), base_dir_(std::move(base_dir)), opts_(opts) {}

  void Problem(SourcePos p, std::string msg) {
    problems_.push_back({source_, p.line, p.column, std::move(msg)});
  }
  std::vector<PieceProblem> TakeProblems() { return std::move(problems_); }

  void WalkPiece(const YAML::Node& root, Piece& piece) {
    if (!root.IsMap()) {
      Problem(PosOf(root), "a piece must be a mapping with name and movements");
      return;
    }
    bool saw_name = false, saw_movements = false;
    DuplicateKeys(root, "piece");
    for (const auto& kv : root) {
      std::string key = Key(kv.first, kPieceKeys, "piece");
      const YAML::Node& v = kv.second;
      if (key == "name")
        saw_name = String(v, "name", piece.name, true);
      else if (key == "description")
        String(v, "description", piece.description);
      else if (key == "initial_movement") {
        String(v, "initial_movement", piece.initial_movement, true);
        piece.initial_movement_pos = PosOf(v);
      } else if (key == "max_movements")
        Int(v, "max_movements", piece.max_movements, 1, kMaxMovementsLimit);
      else if (key == "movements")
        saw_movements = WalkMovements(v, piece);
      else if (key == "loop_monitors")
        WalkMonitors(v, piece);
      else if (key == "checklist")
        StringList(v, "checklist", piece.checklist);
    }
    if (!saw_name) Problem(PosOf(root), "missing required key 'name'");
    if (!saw_movements) Problem(PosOf(root), "missing required key 'movements'");
  }

 private:
  // yaml-cpp keeps both entries of a repeated key and the later one would
  // silently win; a repeated key is almost always an editing mistake.
  void DuplicateKeys(const YAML::Node& map, const char* where) {
    std::map<std::string, int> seen;
    for (const auto& kv : map) {
      if (!kv.first.IsScalar()) continue;
      SourcePos p = PosOf(kv.first);
      auto [it, fresh] = seen.emplace(kv.first.Scalar(), p.line);
      if (!fresh) {
        Problem(p, fmt::format("duplicate {} key '{}' (first at line {})", where, it->first,
                               it->second));
      }
    }
  }

  // Returns the key, or "" after reporting an unknown or non-string key.
  std::string Key(const YAML::Node& k, const std::vector<std::string>& valid, const char* where) {
    if (!k.IsScalar()) {
      Problem(PosOf(k), fmt::format("{} keys must be strings", where));
      return "";
    }
    std::string key = k.Scalar();
    for (const auto& v : valid) {
      if (v == key) return key;
    }
    std::string near = NearestWord(key, valid);
    Problem(PosOf(k), near.empty() ? fmt::format("unknown {} key '{}'", where, key)
                                   : fmt::format("unknown {} key '{}'; did you mean '{}'?", where,
                                                 key, near));
    return "";
  }

  bool String(const YAML::Node& v, const char* what, std::string& out, bool non_empty = false) {
    if (!v.IsScalar()) {
      Problem(PosOf(v), fmt::format("'{}' must be a string", what));
      return false;
    }
    out = v.Scalar();
    if (non_empty && out.empty()) {
      Problem(PosOf(v), fmt::format("'{}' must not be empty", what));
      return false;
    }
    return true;
  }

  bool Int(const YAML::Node& v, const char* what, int& out, int lo, int hi) {
    int64_t i = 0;
    if (!v.IsScalar() || !YAML::convert<int64_t>::decode(v, i)) {
      Problem(PosOf(v), fmt::format("'{}' must be an integer", what));
      return false;
    }
    if (i < lo || i > hi) {
      Problem(PosOf(v), fmt::format("'{}' must be between {} and {}, got {}", what, lo, hi, i));
      return false;
    }
    out = static_cast<int>(i);
    return true;
  }

  bool Bool(const YAML::Node& v, const char* what, bool& out) {
    if (!v.IsScalar() || !YAML::convert<bool>::decode(v, out)) {
      Problem(PosOf(v), fmt::format("'{}' must be true or false", what));
      return false;
    }
    return true;
  }

  bool StringList(const YAML::Node& v, const char* what, std::vector<std::string>& out,
                  std::vector<SourcePos>* positions = nullptr) {
    if (!v.IsSequence()) {
      Problem(PosOf(v), fmt::format("'{}' must be a list of strings", what));
      return false;
    }
    for (const auto& item : v) {
      std::string s;
      if (!String(item, what, s, true)) continue;
      out.push_back(s);
      if (positions) positions->push_back(PosOf(item));
    }
    return true;
  }

  bool WalkMovements(const YAML::Node& v, Piece& piece) {
    if (!v.IsSequence()) {
      Problem(PosOf(v), "'movements' must be a list of movements");
      return true;
    }
    if (v.size() == 0) Problem(PosOf(v), "'movements' must not be empty");
    for (const auto& m : v) {
      Movement mv;
      mv.pos = PosOf(m);
      WalkMovement(m, mv);
      piece.movements.push_back(std::move(mv));
    }
    return true;
  }

  void WalkMovement(const YAML::Node& m, Movement& mv) {
    if (!m.IsMap()) {
      Problem(PosOf(m), "a movement must be a mapping with at least 'name'");
      return;
    }
    bool saw_name = false, saw_guidance = false;
    DuplicateKeys(m, "movement");
    for (const auto& kv : m) {
      std::string key = Key(kv.first, kMovementKeys, "movement");
      const YAML::Node& v = kv.second;
      if (key == "name") {
        saw_name = String(v, "name", mv.name, true);
        if (saw_name) mv.pos = PosOf(v);
      } else if (key == "description") {
        String(v, "description", mv.description);
      } else if (key == "guidance" || key == "instruction") {
        if (saw_guidance) {
          Problem(PosOf(kv.first), "give either 'guidance' or 'instruction', not both");
        }
        saw_guidance = true;
        String(v, key.c_str(), mv.guidance);
      } else if (key == "persona")
        Text(v, "persona", mv.persona);
      else if (key == "policy")
        Text(v, "policy", mv.policy);
      else if (key == "knowledge")
        Text(v, "knowledge", mv.knowledge);
      else if (key == "allowed_tools")
        AllowedTools(v, mv);
      else if (key == "edit")
        Bool(v, "edit", mv.edit);
      else if (key == "rules")
        WalkRules(v, mv);
      else if (key == "default_next")
        String(v, "default_next", mv.default_next, true);
      else if (key == "max_iterations")
        Int(v, "max_iterations", mv.max_iterations, 1, 100000);
    }
    if (!saw_name) Problem(PosOf(m), "movement is missing required key 'name'");
  }

  void AllowedTools(const YAML::Node& v, Movement& mv) {
    std::vector<std::string> tools;
    std::vector<SourcePos> pos;
    if (!StringList(v, "allowed_tools", tools, &pos)) return;
    for (size_t i = 0; i < tools.size(); ++i) {
      if (opts_.known_tools.empty()) break;
      // MCP tools exist only once a job has listed its servers (src/mcp).
      if (tools[i].rfind("mcp__", 0) == 0) continue;
      bool known = false;
      for (const auto& k : opts_.known_tools) known = known || k == tools[i];
      if (known) continue;
      std::string near = NearestWord(tools[i], opts_.known_tools);
      Problem(pos[i], near.empty()
                          ? fmt::format("unknown tool '{}'", tools[i])
                          : fmt::format("unknown tool '{}'; did you mean '{}'?", tools[i], near));
    }
    mv.allowed_tools = std::move(tools);
  }

  void WalkRules(const YAML::Node& v, Movement& mv) {
    if (!v.IsSequence()) {
      Problem(PosOf(v), "'rules' must be a list of {condition, next}");
      return;
    }
    for (const auto& r : v) {
      if (!r.IsMap()) {
        Problem(PosOf(r), "a rule must be a mapping {condition, next}");
        continue;
      }
      PieceRule rule;
      rule.pos = PosOf(r);
      bool saw_next = false;
      DuplicateKeys(r, "rule");
      for (const auto& kv : r) {
        std::string key = Key(kv.first, kRuleKeys, "rule");
        if (key == "condition") String(kv.second, "condition", rule.condition);
        if (key == "next") {
          saw_next = String(kv.second, "next", rule.next, true);
          if (saw_next) rule.pos = PosOf(kv.second);
        }
      }
      if (!saw_next) Problem(PosOf(r), "rule is missing required key 'next'");
      mv.rules.push_back(std::move(rule));
    }
  }

  // Inline string, or {file: path} read relative to the piece's directory.
  void Text(const YAML::Node& v, const char* what, PieceText& out) {
    if (v.IsScalar()) {
      out.text = v.Scalar();
      return;
    }
    if (!v.IsMap()) {
      Problem(PosOf(v), fmt::format("'{}' must be text or {{file: path}}", what));
      return;
    }
    for (const auto& kv : v) {
      std::string key = Key(kv.first, kTextKeys, what);
      if (key == "text") String(kv.second, "text", out.text);
      if (key == "file" && String(kv.second, "file", out.file, true)) ReadTextFile(kv.second, out);
    }
  }

  void ReadTextFile(const YAML::Node& at, PieceText& out) {
    std::filesystem::path p(out.file);
    if (p.is_relative() && !base_dir_.empty()) p = std::filesystem::path(base_dir_) / p;
    std::ifstream in(p, std::ios::binary);
    if (!in) {
      Problem(PosOf(at), fmt::format("cannot read file '{}'", p.string()));
      return;
    }
    std::stringstream ss;
    ss << in.rdbuf();
    out.text = ss.str();
  }

  void WalkMonitors(const YAML::Node& v, Piece& piece) {
    if (!v.IsSequence()) {
      Problem(PosOf(v), "'loop_monitors' must be a list of {cycle, threshold, on_exceed}");
      return;
    }
    for (const auto& m : v) {
      if (!m.IsMap()) {
        Problem(PosOf(m), "a loop monitor must be a mapping {cycle, threshold, on_exceed}");
        continue;
      }
      LoopMonitor lm;
      lm.pos = PosOf(m);
      bool saw_cycle = false;
      DuplicateKeys(m, "loop monitor");
      for (const auto& kv : m) {
        std::string key = Key(kv.first, kMonitorKeys, "loop monitor");
        const YAML::Node& val = kv.second;
        if (key == "cycle")
          saw_cycle = StringList(val, "cycle", lm.cycle);
        else if (key == "threshold")
          Int(val, "threshold", lm.threshold, 1, 1000);
        else if (key == "warning")
          String(val, "warning", lm.warning);
        else if (key == "on_exceed")
          String(val, "on_exceed", lm.on_exceed, true);
      }
      if (!saw_cycle) Problem(PosOf(m), "loop monitor is missing required key 'cycle'");
      piece.loop_monitors.push_back(std::move(lm));
    }
  }

  std::string source_;
  std::string base_dir_;
  const PieceLintOptions& opts_;
  std::vector<PieceProblem> problems_;
};

PieceParse ParseNode(const std::string& text, const std::string& source_name,
                     const std::string& base_dir, const PieceLintOptions& options) {
  PieceParse out;
  out.piece.source = source_name;
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    out.problems.push_back({source_name, e.mark.line + 1, e.mark.column + 1, e.msg});
    return out;
  }
  Walker w(source_name, base_dir, options);
  w.WalkPiece(root, out.piece);
  out.problems = w.TakeProblems();
  CheckPieceSemantics(out.piece, out.problems);
  return out;
}

Status JoinProblems(const std::vector<PieceProblem>& problems) {
  std::string msg;
  for (const auto& p : problems) {
    if (!msg.empty()) msg += "\n";
    msg += p.ToString();
  }
  return InvalidArgument(msg, "piece");
}

}  // namespace

PieceParse ParsePieceText(const std::string& text, const std::string& source_name,
                          const std::string& base_dir, const PieceLintOptions& options) {
  return ParseNode(text, source_name, base_dir, options);
}

PieceParse ParsePieceFile(const std::string& path, const PieceLintOptions& options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    PieceParse out;
    out.piece.source = path;
    out.problems.push_back({path, 0, 0, "cannot open file"});
    return out;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  std::string dir = std::filesystem::path(path).parent_path().string();
  return ParseNode(ss.str(), path, dir, options);
}

Result<Piece> LoadPieceText(const std::string& text, const std::string& source_name,
                            const PieceLintOptions& options) {
  PieceParse p = ParsePieceText(text, source_name, "", options);
  if (!p.ok()) return JoinProblems(p.problems);
  return std::move(p.piece);
}

}  // namespace maestro::engine
