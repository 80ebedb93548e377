#include "knowledge/knowledge_tools.h"

#include <fmt/format.h>

#include <algorithm>

#include "knowledge/memory.h"
#include "tools/schema.h"

namespace maestro::knowledge {

Status RegisterReadSkill(tools::ToolRegistry& registry, std::vector<Skill> skills, Env* env) {
  tools::ToolSpec spec;
  spec.name = kReadSkill;
  spec.description =
      "Read the instructions of one skill listed in the Skills index. Read a skill before you "
      "follow it.";
  Json names = Json::array();
  for (const Skill& s : skills) names.push_back(s.name);
  spec.parameters =
      tools::ObjectSchema({{"name", {{"type", "string"}, {"enum", names}}}}, {"name"});
  spec.read_only = true;
  spec.tool_class = tools::ToolClass::kControl;  // always allowed: it only reads the index's files
  return registry.Register(
      spec, [skills = std::move(skills), env](const Json& args, const tools::ToolContext&) {
        const std::string name = args.value("name", "");
        auto it = std::find_if(skills.begin(), skills.end(),
                               [&](const Skill& s) { return s.name == name; });
        if (it == skills.end()) return tools::ToolResult::Error("no skill named '" + name + "'");
        auto text = ReadSkillText(*env, it->file);
        if (!text.ok())
          return tools::ToolResult::Error("cannot read skill: " + text.status().message());
        auto parsed = ParseSkillFile(*text, it->name);
        if (!parsed.ok()) return tools::ToolResult::Error(parsed.status().message());
        return tools::ToolResult::Ok(
            fmt::format("# Skill: {}\n{}\n\n{}", parsed->name, parsed->description, parsed->body));
      });
}

Status RegisterMemory(tools::ToolRegistry& registry, std::string memory_dir, Env* env,
                      const Clock* clock) {
  tools::ToolSpec spec;
  spec.name = kMemory;
  spec.description =
      "Read or add to the memory later tasks here will share (this space's, or, for a task "
      "without a space, your own): notes they should know (how to build, where things are, what "
      "failed before). read: a topic's notes, or all; append: one note under a topic.";
  spec.parameters = tools::ObjectSchema(
      {{"action", {{"type", "string"}, {"enum", {"read", "append"}}}},
       {"topic", {{"type", "string"}, {"description", "a short topic name, e.g. build"}}},
       {"text", {{"type", "string"}, {"description", "append: the note, one fact"}}}},
      {"action"});
  spec.read_only = false;                        // append writes
  spec.tool_class = tools::ToolClass::kControl;  // offered only when memory is enabled
  return registry.Register(spec, [dir = std::move(memory_dir), env, clock](
                                     const Json& args, const tools::ToolContext& ctx) {
    const std::string action = args.value("action", "");
    const std::string topic = args.value("topic", "");
    if (action == "append") {
      MemoryNote n{clock->NowMs(), topic, args.value("text", ""), ctx.key.task_id};
      if (Status s = AppendMemory(*env, dir, n); !s.ok()) {
        return tools::ToolResult::Error(s.message());
      }
      return tools::ToolResult::Ok("Noted under '" + topic + "'.");
    }
    auto notes = ReadMemory(*env, dir);
    if (!notes.ok())
      return tools::ToolResult::Error("cannot read memory: " + notes.status().message());
    std::string view = MemoryView(*notes, topic);
    if (view.empty()) {
      return tools::ToolResult::Ok(topic.empty() ? "The memory is empty."
                                                 : "No notes under '" + topic + "'.");
    }
    return tools::ToolResult::Ok(view);
  });
}

Status RegisterRecordLesson(tools::ToolRegistry& registry, LessonRecords* store,
                            LessonTarget target) {
  tools::ToolSpec spec;
  spec.name = kRecordLesson;
  spec.description =
      "Record one lesson learned from the task under review, for later tasks: a specific, "
      "checkable rule (\"run make fixtures before the tests\"), not a summary.";
  spec.parameters = tools::ObjectSchema(
      {{"lesson", {{"type", "string"}, {"minLength", 1}, {"maxLength", 1000}}},
       {"scope",
        {{"type", "string"},
         {"enum", {"space", "piece"}},
         {"description", "space: every later task in this space; piece: only tasks of its piece"}}},
       {"evidence",
        {{"type", "array"},
         {"items", {{"type", "string"}}},
         {"description", "ids of the tasks that show it (the reviewed task is always included)"}}}},
      {"lesson", "scope"});
  spec.read_only = false;
  spec.tool_class = tools::ToolClass::kControl;  // only a Reflection task is offered it
  return registry.Register(
      spec, [store, t = std::move(target)](const Json& args, const tools::ToolContext&) {
        Lesson l;
        l.space = t.space;
        l.scope = ParseLessonScope(args.value("scope", "space")).value_or(LessonScope::kSpace);
        l.piece = l.scope == LessonScope::kPiece ? t.piece : "";
        l.lesson = args.value("lesson", "");
        l.source_task_id = t.source_task_id;
        l.evidence.push_back(t.task_id);
        if (args.contains("evidence") && args["evidence"].is_array()) {
          for (const Json& e : args["evidence"]) {
            if (!e.is_string()) continue;
            const std::string id = e.get<std::string>();
            if (std::find(l.evidence.begin(), l.evidence.end(), id) == l.evidence.end() &&
                l.evidence.size() < 20) {
              l.evidence.push_back(id);
            }
          }
        }
        auto added = store->AddLesson(l);
        if (!added.ok())
          return tools::ToolResult::Error("lesson not recorded: " + added.status().message());
        return tools::ToolResult::Ok("Lesson " + added->id + " recorded (scope " +
                                     std::string(LessonScopeName(l.scope)) + ").");
      });
}

}  // namespace maestro::knowledge
