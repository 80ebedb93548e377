// Scripted task shapes for many tasks running at once on several workers.
//
// Each shape is the fake LLM's replies for ONE task, told apart from every
// other task's by the task's tag (e.g. "<<T17>>", in its instruction): every
// reply's match names the tag plus, for later steps, a marker that only the
// previous step's result puts into the conversation. Later steps come first
// in the list, so a request gets the reply of the furthest step its
// conversation has reached. Every reply has `repeat: 0`: a job that is
// killed and re-run (or an LLM call retried) gets the same reply again — the
// reply is a function of the conversation, not of the order of requests.
//
// Markers are texts of the engine's tool results (src/tools, src/engine),
// never words of the system prompt: "wrote N bytes to <file>", "Subtask …
// created (job …)", "The subtasks of this job have ended", "All subtasks have
// finished", "Approved (request …)". A command's output is told from its
// command line by arithmetic: `echo A-$((6*7))` prints "A-42", which the call
// never shows.
#pragma once

#include <string>

#include "core/json.h"
#include "serve_fixture.h"

namespace maestro::testing::shapes {

inline Json On(Json reply, const Json& needles) {
  reply["match"] = {{"any_message_contains", needles}};
  reply["repeat"] = 0;
  return reply;
}

inline Json Complete(const std::string& result) {
  return ToolCallReply("complete", {{"status", "success"}, {"result", result}});
}

inline void Append(Json& replies, const Json& more) {
  for (const auto& r : more) replies.push_back(r);
}

// The model answers at once.
inline Json Plain(const std::string& tag, const std::string& answer) {
  return Json::array({On(Complete(answer), {tag})});
}

// WriteFile `file` (content: the tag), then the answer.
inline Json WriteThenAnswer(const std::string& tag, const std::string& file,
                            const std::string& answer) {
  return Json::array({On(Complete(answer), {tag, "bytes to " + file}),
                      On(ToolCallReply("WriteFile", {{"path", file}, {"content", tag}}), {tag})});
}

// ASK: the job parks on `question`; a comment containing `reply_marker`
// gets `answer`.
inline Json AskThenAnswer(const std::string& tag, const std::string& question,
                          const std::string& reply_marker, const std::string& answer) {
  return Json::array({On(Complete(answer), {tag, reply_marker}),
                      On(ToolCallReply("complete", {{"status", "needs_user_input"},
                                                    {"result", "need input"},
                                                    {"question", question}}),
                         {tag})});
}

// RequestTool for a networked `echo` (parks for approval), the re-issued
// request answered "Approved", the granted RunCommand, then the answer once
// its output ("<out>-42") is in the conversation — or once a person's
// comment holding `settled_marker` settled a command that a killed worker
// left started but unfinished (a `reconcile` park, docs/tools.md): the once
// grant is spent, so the model takes the person's word instead of repeating
// it. (WriteThenAnswer needs no such reply: after a settlement it writes
// the file again, which is what the agent would do.)
inline Json RunCommandArgs(const std::string& out) {
  // The sleep keeps the command running a moment: a kill can land in it.
  return {{"command", "sleep 0.2; echo " + out + "-$((6*7))"}, {"network", true}};
}
inline Json ApprovedCommand(const std::string& tag, const std::string& out,
                            const std::string& answer, const std::string& settled_marker = "") {
  const Json args = RunCommandArgs(out);
  const Json request = ToolCallReply(
      "RequestTool", {{"tool", "RunCommand"}, {"arguments", args}, {"reason", "needs network"}});
  Json out_replies = Json::array();
  if (!settled_marker.empty()) out_replies.push_back(On(Complete(answer), {tag, settled_marker}));
  Append(out_replies,
         Json::array({On(Complete(answer), {tag, out + "-42"}),
                      On(ToolCallReply("RunCommand", args), {tag, "Approved (request"}),
                      On(request, {tag})}));
  return out_replies;
}

// SpinOffTask (child instruction tagged `child_tag`), WaitSubTask, then the
// answer once the children ended — after the resume notice, or at once when
// the child (on another worker) ended before WaitSubTask and it answered
// without parking. The child answers `child_answer`. The parent's replies
// come first: the child's conversation never holds the parent's tag, while
// the parent's may quote the child's.
inline Json WithSubtask(const std::string& tag, const std::string& child_tag,
                        const std::string& child_answer, const std::string& answer) {
  return Json::array(
      {On(Complete(answer), {tag, "The subtasks of this job have ended"}),
       On(Complete(answer), {tag, "All subtasks have finished"}),
       On(ToolCallReply("WaitSubTask", Json::object()), {tag, "created (job "}),
       On(ToolCallReply("SpinOffTask",
                        {{"title", "part"}, {"instruction", child_tag + " do the part"}}),
          {tag}),
       On(Complete(child_answer), {child_tag})});
}

}  // namespace maestro::testing::shapes
