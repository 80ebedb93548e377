#include "fakellm/provider_api.h"

namespace maestro::fakellm {
// Placeholder until the Anthropic fake lands (issue 50): every request 501.
namespace {
class Pending final : public ProviderApi {
 public:
  HttpAnswer Handle(const ProviderRequest&, Json* record) override {
    HttpAnswer a;
    a.status = 501;
    a.body = R"({"type":"error","error":{"type":"api_error","message":"not built"}})";
    (*record)["status"] = 501;
    return a;
  }
};
}  // namespace
std::unique_ptr<ProviderApi> NewAnthropicApi(const ServerOptions&, Script*) {
  return std::make_unique<Pending>();
}
}  // namespace maestro::fakellm
