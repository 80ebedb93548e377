// UploadedFile: a file a person sends with a new task or a comment, as it
// came in and before it is stored. The HTTP edge reads it from a request
// (api/attachments.h ParseUploadRequest); the TaskService
// (api/task_service.h) writes it into the task's workspace. Plain data, so
// the service's interface carries no HTTP type.
#pragma once

#include <string>

namespace maestro::api {

struct UploadedFile {
  std::string field;         // what errors name: "attachments[0]" or the file's name
  std::string name;          // sanitized (SanitizeAttachmentName)
  std::string content_type;  // as sent; "application/octet-stream" when none
  std::string bytes;
};

}  // namespace maestro::api
