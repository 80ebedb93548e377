// Attachment routes:
//   GET /api/local/tasks/:id/attachments   every file sent with the task
// Where an upload's files go is the TaskService's (api/task_service.h: the
// task's workspace, under attachments/; api/attachments.h has the rules).
#include "api/api_server.h"
#include "api/http_util.h"

namespace maestro {

using api::Reply;
using api::ReplyError;

namespace {

// GET /api/local/tasks/{id}/attachments: every file sent with the task.
api::HttpResponse ListAttachments(api::TaskService& tasks, api::TaskReads& reads,
                                  const api::HttpRequest& req) {
  if (auto t = tasks.VisibleTask(req.params[0], req.user); !t.ok()) return ReplyError(t.status());
  auto arr = reads.AttachmentsJson(req.params[0], "");
  if (!arr.ok()) return ReplyError(arr.status());
  return Reply(200, {{"attachments", *arr}});
}

}  // namespace

void ApiServer::AttachmentRoutes() {
  router_.Add("GET", "/api/local/tasks/{uuid}/attachments", api::Need::kRead,
              [this](const api::HttpRequest& r) { return ListAttachments(tasks_, reads_, r); });
}

}  // namespace maestro
