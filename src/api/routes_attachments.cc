// Attachment routes and the task operations behind uploads:
//   GET /api/local/tasks/:id/attachments   every file sent with the task
// and where an upload's files go (ApiServer::StoreFiles): the task's
// workspace, under attachments/ (api/attachments.h has the rules; the
// create and comment routes in routes_tasks.cc call it).
#include "api/api_server.h"
#include "api/http_util.h"
#include "workspace/workspace.h"

namespace maestro {

using api::Reply;
using api::ReplyError;

std::string ApiServer::WorkspaceDirOf(const std::string& task_id, const std::string& space) const {
  if (!space.empty()) {
    for (const auto& s : options_.choices.spaces) {
      if (s.name == space) return s.path;
    }
    return "";
  }
  if (options_.data_dir.empty()) return "";
  return tools::EphemeralWorkspaceDir(options_.data_dir, task_id);
}

Result<std::vector<Attachment>> ApiServer::StoreFiles(const std::string& task_id,
                                                      const std::string& space,
                                                      const std::vector<api::UploadedFile>& files) {
  if (files.empty()) return std::vector<Attachment>();
  const std::string dir = WorkspaceDirOf(task_id, space);
  if (dir.empty()) {
    return Status(StatusCode::kUnavailable, "this server keeps no workspaces: attachments are off",
                  "attachments");
  }
  return api::WriteAttachments(*options_.env, dir, files);
}

Result<Json> ApiServer::AttachmentsJson(const std::string& task_id, const std::string& comment_id) {
  auto all = store_.ListAttachments(task_id);
  if (!all.ok()) return all.status();
  Json arr = Json::array();
  for (const Attachment& a : *all) {
    if (comment_id.empty() || a.comment_id == comment_id) arr.push_back(api::AttachmentJson(a));
  }
  return arr;
}

void ApiServer::AttachmentRoutes() {
  router_.Add("GET", "/api/local/tasks/{uuid}/attachments", api::Access::kToken,
              [this](const api::HttpRequest& req) {
                if (auto t = VisibleTask(req.params[0], req.user); !t.ok())
                  return ReplyError(t.status());
                auto arr = AttachmentsJson(req.params[0], "");
                if (!arr.ok()) return ReplyError(arr.status());
                return Reply(200, {{"attachments", *arr}});
              });
}

}  // namespace maestro
