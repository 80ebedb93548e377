#include "fakellm/provider_api.h"

namespace maestro::fakellm {
// Placeholder until the Gemini fake lands (issue 50): every request 501.
namespace {
class GeminiPending final : public ProviderApi {
 public:
  HttpAnswer Handle(const ProviderRequest&, Json* record) override {
    HttpAnswer a;
    a.status = 501;
    a.body = R"({"error":{"code":501,"message":"not built","status":"UNIMPLEMENTED"}})";
    (*record)["status"] = 501;
    return a;
  }
};
}  // namespace
std::unique_ptr<ProviderApi> NewGeminiApi(const ServerOptions&, Script*) {
  return std::make_unique<GeminiPending>();
}
}  // namespace maestro::fakellm
