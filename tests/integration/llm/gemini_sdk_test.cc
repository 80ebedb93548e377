// The official Google Gen AI client checks maestro-fakellm's Gemini fake
// (issue 50): tests/llm-sdks/gemini_check.mjs drives @google/genai (pinned)
// against the real maestro-fakellm binary — generateContent (text, a
// function call), generateContentStream (text over several chunks, a
// thought and a function call), implicit caching across two turns, a 400 —
// and prints what the SDK read. This test asserts those figures exactly
// against the fake's own record (GET /v1/_requests) and the tokenizer, so
// the fake's wire format is the one the real client parses.
#include <gtest/gtest.h>
#include <httplib.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "fakellm/prompt_cache.h"
#include "fakellm_process.h"
#include "support/process.h"

namespace maestro::testing {
namespace {

using namespace std::chrono_literals;

std::string GemReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int64_t GemTokens(const std::string& text) {
  return static_cast<int64_t>(fakellm::Tokenize(text).size());
}

// Runs `node gemini_check.mjs <base>`; its stdout as JSON.
Json RunGeminiCheck(const std::string& base) {
  const std::string sdks = MAESTRO_LLM_SDKS_DIR;
  const std::string dir = ::testing::TempDir() + "gemini_sdk_" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  Process node({"/usr/bin/env", "node", sdks + "/gemini_check.mjs", base}, {}, dir + "/node.out",
               dir + "/node.err");
  auto code = node.Wait(60s);
  const std::string out = GemReadFile(dir + "/node.out");
  const std::string err = GemReadFile(dir + "/node.err");
  EXPECT_TRUE(code.has_value() && *code == 0) << out << err;
  std::filesystem::remove_all(dir);
  return Json::parse(out, nullptr, false);
}

TEST(GeminiSdk, OfficialClientReadsTheFake) {
  const std::string sdks = MAESTRO_LLM_SDKS_DIR;
  ASSERT_TRUE(std::filesystem::exists(sdks + "/node_modules/@google/genai/package.json"))
      << "@google/genai is not installed: run ./scripts/npm_pinned.sh tests/llm-sdks";
  FakeLlmProcess fake({"--script", sdks + "/gemini_script.json"});
  const Json seen = RunGeminiCheck("http://127.0.0.1:" + std::to_string(fake.port()));
  ASSERT_TRUE(seen.is_object()) << seen;

  httplib::Client http("127.0.0.1", fake.port());
  auto got = http.Get("/v1/_requests");
  ASSERT_TRUE(got && got->status == 200);
  const Json reqs = Json::parse(got->body)["requests"];
  ASSERT_EQ(reqs.size(), 7u) << reqs.dump();
  // Every SDK request but the deliberate one passed validation and took its
  // scripted reply, on the method the SDK chose.
  const std::vector<std::pair<std::string, int>> want = {
      {"generateContent", 200},       {"generateContent", 200}, {"streamGenerateContent", 200},
      {"streamGenerateContent", 200}, {"generateContent", 200}, {"generateContent", 200},
      {"generateContent", 400}};
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(reqs[i]["path"], "/v1beta/models/gemini-test:" + want[i].first) << i;
    EXPECT_EQ(reqs[i]["status"], want[i].second) << reqs[i].dump();
    EXPECT_EQ(reqs[i]["reply"], want[i].second == 200 ? static_cast<int>(i) : -1) << i;
  }
  auto prompt = [&](size_t i) { return reqs[i]["cache"]["prompt_tokens"].get<int64_t>(); };

  // generateContent: text, usage.
  const Json& text = seen["text"];
  EXPECT_EQ(text["text"], "Hello from the Gemini fake.");
  EXPECT_EQ(text["finishReason"], "STOP");
  EXPECT_EQ(text["modelVersion"], "gemini-test");
  const int64_t hello = GemTokens("Hello from the Gemini fake.");
  EXPECT_EQ(text["usage"], Json({{"prompt", prompt(0)},
                                 {"cached", nullptr},
                                 {"candidates", hello},
                                 {"thoughts", nullptr},
                                 {"total", prompt(0) + hello}}));

  // A function call with its id and args, from a request with a system
  // instruction, a tool and a generation config as the SDK spells them.
  EXPECT_EQ(
      seen["call"]["functionCalls"],
      Json::parse(R"([{"id":"call-w1","name":"get_weather","args":{"city":"Paris","days":2}}])"));
  EXPECT_EQ(seen["call"]["finishReason"], "STOP");
  const Json& body1 = reqs[1]["body"];
  EXPECT_EQ(body1["systemInstruction"]["parts"][0]["text"], "You answer with tools.");
  EXPECT_EQ(body1["tools"][0]["functionDeclarations"][0]["name"], "get_weather");
  EXPECT_EQ(body1["generationConfig"]["temperature"], 0);

  // Streamed text: one chunk per 8 bytes, usage on the last chunk.
  const Json& stream = seen["stream"];
  EXPECT_EQ(stream["chunks"], Json({"Streamin", "g over s", "everal c", "hunks."}));
  EXPECT_EQ(stream["finishReason"], "STOP");
  const int64_t streamed = GemTokens("Streaming over several chunks.");
  EXPECT_EQ(stream["usage"], Json({{"prompt", prompt(2)},
                                   {"cached", nullptr},
                                   {"candidates", streamed},
                                   {"thoughts", nullptr},
                                   {"total", prompt(2) + streamed}}));

  // Streamed thought then function call.
  const Json& sc = seen["streamCall"];
  EXPECT_EQ(sc["thoughts"], Json({"Need the weather."}));
  EXPECT_EQ(sc["functionCalls"],
            Json::parse(R"([{"id":"call-w2","name":"get_weather","args":{"city":"Oslo"}}])"));
  const int64_t call_out = GemTokens(std::string("get_weather") + R"({"city":"Oslo"})");
  const int64_t thoughts = GemTokens("Need the weather.");
  EXPECT_EQ(sc["usage"], Json({{"prompt", prompt(3)},
                               {"cached", nullptr},
                               {"candidates", call_out},
                               {"thoughts", thoughts},
                               {"total", prompt(3) + call_out + thoughts}}));

  // Implicit caching: the second turn reads all of the first request.
  const Json& cache = seen["cache"];
  EXPECT_EQ(cache["texts"], Json({"first answer", "second answer"}));
  EXPECT_GT(prompt(4), 1024);  // over the default minimum
  EXPECT_EQ(cache["first"]["prompt"], prompt(4));
  EXPECT_EQ(cache["first"]["cached"], nullptr);
  EXPECT_EQ(cache["second"]["prompt"], prompt(5));
  EXPECT_EQ(cache["second"]["cached"], prompt(4));
  EXPECT_EQ(reqs[5]["cache"],
            Json({{"prompt_tokens", prompt(5)}, {"cache_read", prompt(4)}, {"cache_write", 0}}));

  // A 400 is an ApiError with the status and the message naming the field.
  const Json& invalid = seen["invalid"];
  EXPECT_EQ(invalid["thrown"], true);
  EXPECT_EQ(invalid["name"], "ApiError");
  EXPECT_EQ(invalid["status"], 400);
  EXPECT_EQ(Json::parse(invalid["message"].get<std::string>()),
            Json::parse(R"({"error":{"code":400,"status":"INVALID_ARGUMENT","message":
                "* GenerateContentRequest.contents[0].role: Please use a valid role: user, model.\n"}})"));
}

}  // namespace
}  // namespace maestro::testing
