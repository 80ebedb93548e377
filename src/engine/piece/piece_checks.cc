#include "engine/piece/piece_checks.h"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <map>
#include <set>

#include "core/json.h"
#include "engine/piece/sentinel.h"

namespace maestro::engine {

namespace {

class Checker {
 public:
  Checker(Piece& piece, std::vector<PieceProblem>& problems) : piece_(piece), problems_(problems) {
    for (const auto& m : piece_.movements) {
      if (!m.name.empty()) names_.push_back(m.name);
    }
  }

  void Run() {
    Duplicates();
    Initial();
    for (const auto& m : piece_.movements) {
      for (const auto& r : m.rules) RuleTarget(r);
      if (!m.default_next.empty()) DefaultNext(m);
    }
    for (const auto& lm : piece_.loop_monitors) Monitor(lm);
    Reachability();
  }

 private:
  void Problem(SourcePos p, std::string msg) {
    problems_.push_back({piece_.source, p.line, p.column, std::move(msg)});
  }

  bool IsMovement(const std::string& n) const { return piece_.FindMovement(n) != nullptr; }

  std::string UnknownMovement(const std::string& what, const std::string& n) const {
    std::string near = NearestWord(n, names_);
    if (near.empty()) return fmt::format("{} '{}' is not a movement of this piece", what, n);
    return fmt::format("{} '{}' is not a movement of this piece; did you mean '{}'?", what, n,
                       near);
  }

  void Duplicates() {
    std::map<std::string, SourcePos> seen;
    for (const auto& m : piece_.movements) {
      if (m.name.empty()) continue;
      auto [it, fresh] = seen.emplace(m.name, m.pos);
      if (!fresh) {
        Problem(m.pos, fmt::format("duplicate movement name '{}' (first defined at line {})",
                                   m.name, it->second.line));
      }
      if (IsSentinel(m.name)) {
        Problem(m.pos, fmt::format("movement name '{}' is reserved for the engine", m.name));
      }
    }
  }

  void Initial() {
    if (piece_.movements.empty()) return;
    if (piece_.initial_movement.empty()) {
      piece_.initial_movement = piece_.movements.front().name;
      return;
    }
    if (!IsMovement(piece_.initial_movement)) {
      Problem(piece_.initial_movement_pos,
              UnknownMovement("initial_movement", piece_.initial_movement));
    }
  }

  void RuleTarget(const PieceRule& r) {
    if (r.next.empty()) return;
    auto s = ParseSentinel(r.next);
    if (s && *s == Sentinel::kWaitSubtasks) return;
    if (s) {
      Problem(r.pos, fmt::format("rules[].next may not be '{}': only movements and "
                                 "WAIT_SUBTASKS are allowed; finishing, asking and aborting "
                                 "use the complete tool",
                                 r.next));
      return;
    }
    if (!IsMovement(r.next)) Problem(r.pos, UnknownMovement("rules[].next", r.next));
  }

  void DefaultNext(const Movement& m) {
    if (m.default_next == "COMPLETE" || IsMovement(m.default_next)) return;
    if (IsSentinel(m.default_next)) {
      Problem(m.pos, fmt::format("default_next of '{}' may be a movement or COMPLETE, not '{}'",
                                 m.name, m.default_next));
      return;
    }
    Problem(m.pos, UnknownMovement("default_next", m.default_next));
  }

  void Monitor(const LoopMonitor& lm) {
    if (lm.cycle.size() < 2 && !lm.cycle.empty()) {
      Problem(lm.pos, "a loop monitor's cycle needs at least two movements");
    }
    for (const auto& c : lm.cycle) {
      if (!IsMovement(c)) Problem(lm.pos, UnknownMovement("loop monitor cycle entry", c));
    }
    if (lm.on_exceed != "ABORT" && !IsMovement(lm.on_exceed)) {
      Problem(lm.pos, UnknownMovement("on_exceed (ABORT or a movement)", lm.on_exceed));
    }
  }

  // Breadth-first from the initial movement along rules, default_next and
  // loop-monitor exits; movements never reached are dead weight or a typo.
  void Reachability() {
    if (!IsMovement(piece_.initial_movement)) return;
    std::set<std::string> seen{piece_.initial_movement};
    std::deque<std::string> todo{piece_.initial_movement};
    while (!todo.empty()) {
      const Movement* m = piece_.FindMovement(todo.front());
      todo.pop_front();
      std::vector<std::string> next;
      for (const auto& r : m->rules) next.push_back(r.next);
      next.push_back(m->default_next);
      for (const auto& lm : piece_.loop_monitors) {
        if (std::find(lm.cycle.begin(), lm.cycle.end(), m->name) != lm.cycle.end()) {
          next.push_back(lm.on_exceed);
        }
      }
      for (const auto& n : next) {
        if (IsMovement(n) && seen.insert(n).second) todo.push_back(n);
      }
    }
    std::set<std::string> reported;
    for (const auto& m : piece_.movements) {
      if (m.name.empty() || seen.count(m.name) || !reported.insert(m.name).second) continue;
      Problem(m.pos, fmt::format("movement '{}' is unreachable from initial movement '{}'", m.name,
                                 piece_.initial_movement));
    }
  }

  Piece& piece_;
  std::vector<PieceProblem>& problems_;
  std::vector<std::string> names_;
};

}  // namespace

void CheckPieceSemantics(Piece& piece, std::vector<PieceProblem>& problems) {
  Checker(piece, problems).Run();
  std::stable_sort(problems.begin(), problems.end(),
                   [](const PieceProblem& a, const PieceProblem& b) {
                     return std::tie(a.line, a.column) < std::tie(b.line, b.column);
                   });
}

}  // namespace maestro::engine
