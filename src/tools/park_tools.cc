#include "tools/park_tools.h"

#include "tools/schema.h"
#include "tools/tool_names.h"

namespace maestro::tools {

namespace {

const Json kStr = {{"type", "string"}};
const Json kNonEmpty = {{"type", "string"}, {"minLength", 1}};

ToolSpec Control(std::string name, std::string desc, Json params,
                 ToolClass cls = ToolClass::kControl) {
  ToolSpec s;
  s.name = std::move(name);
  s.description = std::move(desc);
  s.parameters = std::move(params);
  s.read_only = false;
  s.tool_class = cls;
  return s;
}

}  // namespace

const std::vector<ControlToolInfo>& ControlTools() {
  static const std::vector<ControlToolInfo> kTable = {
      {kComplete, "ASK", "waiting_human", "ask", true, false},
      {kTransition, "", "", "", false, false},
      {kRequestTool, "WAITING_HUMAN_TOOL_REQUEST", "waiting_human", "tool_request", true, true},
      {kRequestPackage, "WAITING_HUMAN_PACKAGE_REQUEST", "waiting_human", "package_request", true,
       true},
      {kWaitSubTask, "WAIT_SUBTASKS", "waiting_subtasks", "", true, false},
      {kSpinOffTask, "WAITING_HUMAN_SPAWN_REQUEST", "waiting_human", "spawn_request", true, true},
      {kRequestCaptchaHelp, "WAITING_HUMAN_BROWSER", "waiting_human", "captcha", true, false},
      {kDelegate, "", "", "", false, false},
      {kWriteHandoff, "", "", "", false, false},
  };
  return kTable;
}

const ControlToolInfo* FindControlTool(std::string_view name) {
  for (const auto& c : ControlTools()) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

Status RegisterParkTools(ToolRegistry& r) {
  MAESTRO_RETURN_IF_ERROR(r.Register(
      Control(kRequestTool,
              "Ask the user for permission to call a tool this workspace does not allow. The job "
              "waits for the decision; after approval call the tool with exactly these arguments.",
              ObjectSchema({{"tool", kNonEmpty},
                            {"arguments", {{"type", "object"}}},
                            {"reason", kNonEmpty},
                            {"scope", {{"type", "string"}, {"enum", {"once", "task"}}}}},
                           {"tool", "reason"})),
      nullptr));
  MAESTRO_RETURN_IF_ERROR(r.Register(
      Control(kRequestPackage,
              "Ask the user to install a package (apt, pip, npm, ...) for this task. The job waits "
              "for the decision; an approved package is installed before the job resumes.",
              ObjectSchema({{"ecosystem", kNonEmpty},
                            {"name", kNonEmpty},
                            {"version", kStr},
                            {"reason", kNonEmpty}},
                           {"ecosystem", "name", "reason"})),
      nullptr));
  MAESTRO_RETURN_IF_ERROR(r.Register(
      Control(kWaitSubTask,
              "Wait until the subtasks this job started have finished; the job parks without "
              "holding a worker and resumes in this movement, where their results can be read.",
              ObjectSchema({{"reason", kStr}}, {}), ToolClass::kAgent),
      nullptr));
  MAESTRO_RETURN_IF_ERROR(r.Register(
      Control(
          kSpinOffTask,
          "Start a separate task (a subtask of this job). Targeting another workspace needs the "
          "user's approval, and the job waits for it.",
          ObjectSchema(
              {{"title", kNonEmpty}, {"instruction", kNonEmpty}, {"piece", kStr}, {"space", kStr}},
              {"title", "instruction"}),
          ToolClass::kAgent),
      nullptr));
  MAESTRO_RETURN_IF_ERROR(r.Register(
      Control(
          kDelegate,
          "Hand a self-contained sub-problem to a sub-agent with its own fresh conversation and "
          "the same tools; its final answer is returned as this tool's result.",
          ObjectSchema({{"task", kNonEmpty}, {"context", kStr}}, {"task"}), ToolClass::kAgent),
      nullptr));
  return r.Register(WriteHandoffToolSpec(), nullptr);
}

ToolSpec RequestCaptchaHelpToolSpec() {
  return Control(kRequestCaptchaHelp,
                 "Ask a person to solve a CAPTCHA that blocks the browser (e.g. every search "
                 "answers with one). The job waits; when the CAPTCHA screen is solved it resumes "
                 "here and you can retry.",
                 ObjectSchema({{"screen",
                                {{"type", "string"},
                                 {"minLength", 1},
                                 {"description", "the URL (or host) of the CAPTCHA page"}}},
                               {"reason", kStr}},
                              {"screen"}));
}

ToolSpec WriteHandoffToolSpec() {
  auto list = [](const char* description) {
    return Json{{"type", "array"}, {"items", {{"type", "string"}}}, {"description", description}};
  };
  return Control(
      kWriteHandoff,
      "Record the facts of this session for the next one: what is completed, in progress and "
      "pending, decisions taken and why, blockers, files changed. Facts only: no next steps or "
      "advice.",
      ObjectSchema(
          {{"spec_ref", {{"type", "string"}, {"description", "where the task's spec is"}}},
           {"status",
            ObjectSchema({{"completed", list("work finished and verified")},
                          {"in_progress", list("work started but not finished: what part is done")},
                          {"pending", list("work of the spec not started")}},
                         {"completed", "in_progress", "pending"})},
           {"decisions",
            {{"type", "array"},
             {"items", ObjectSchema({{"what", kStr}, {"why", kStr}}, {"what", "why"})}}},
           {"blockers", list("obstacles met and not resolved")},
           {"files_changed", list("\"path — what changed\" for every file changed")}},
          {"spec_ref", "status", "decisions", "blockers", "files_changed"}));
}

}  // namespace maestro::tools
