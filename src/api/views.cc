#include "api/views.h"

namespace maestro::api {

Json TaskJson(const Task& t) {
  return {{"id", t.id},
          {"title", t.title},
          {"instruction", t.instruction},
          {"piece", t.piece},
          {"space", t.space},
          {"visibility", t.visibility},
          {"owner", t.owner},
          {"status", JobStatusName(t.status)},
          {"llm_provider", t.llm_provider},
          {"model", t.model},
          {"context_length", t.context_length},
          {"llm_call_count", t.llm_call_count},
          {"tool_call_count", t.tool_call_count},
          {"total_tokens", t.total_tokens},
          {"compression_count", t.compression_count},
          {"error_message", t.error_message},
          {"created_at", t.created_at},
          {"started_at", t.started_at},
          {"completed_at", t.completed_at},
          {"updated_at", t.updated_at},
          {"budget", t.budget.is_object() ? t.budget : Json::object()},
          {"mission_id", t.mission_id}};
}

Json JobJson(const Job& j) {
  return {{"id", j.id},
          {"task_id", j.task_id},
          {"status", JobStatusName(j.status)},
          {"piece", j.piece},
          {"profile", j.profile},
          {"model", j.model},
          {"attempt", j.attempt},
          {"max_attempts", j.max_attempts},
          {"wait_reason", j.wait_reason},
          {"captcha_space_id", j.captcha_space_id},
          {"captcha_screen", j.captcha_screen},
          {"resume_movement", j.resume_movement},
          {"ask_count", j.ask_count},
          {"priority", j.priority},
          {"parent_job_id", j.parent_job_id},
          {"continued_from_job_id", j.continued_from_job_id},
          {"cancel_requested", j.cancel_requested},
          {"error_message", j.error_message},
          {"result", j.result},
          {"next_retry_at", j.next_retry_at},
          {"created_at", j.created_at},
          {"started_at", j.started_at},
          {"finished_at", j.finished_at}};
}

Json CommentJson(const Comment& c) {
  return {{"id", c.id},
          {"task_id", c.task_id},
          {"job_id", c.job_id},
          {"author", c.author},
          {"kind", CommentKindName(c.kind)},
          {"body", c.body},
          {"delivered_at", c.delivered_at},
          {"created_at", c.created_at}};
}

Json RequestJson(const Request& r) {
  return {{"id", r.id},
          {"task_id", r.task_id},
          {"job_id", r.job_id},
          {"kind", RequestKindName(r.kind)},
          {"name", r.name},
          {"args", r.args},
          {"reason", r.reason},
          {"status", RequestStatusName(r.status)},
          {"scope", r.scope ? GrantScopeName(*r.scope) : ""},
          {"decided_by", r.decided_by},
          {"decided_at", r.decided_at},
          {"created_at", r.created_at}};
}

Json EventJson(const Event& e) {
  return {{"id", e.id},     {"task_id", e.task_id}, {"job_id", e.job_id},
          {"type", e.type}, {"payload", e.payload}, {"created_at", e.created_at}};
}

}  // namespace maestro::api
