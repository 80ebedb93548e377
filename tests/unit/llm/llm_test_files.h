// The scratch files of the src/llm unit tests: a fixture that gives each test
// its own directory (named after the test, removed after it) and writes the
// messages and tools files a body reads.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "core/json.h"

namespace maestro::llm::test_files {

// `lines` as current.jsonl holds them: one compact JSON object a line.
inline std::string JsonlText(const std::vector<Json>& lines) {
  std::string out;
  for (const Json& l : lines) out += l.dump() + "\n";
  return out;
}

class LlmFileTest : public ::testing::Test {
 protected:
  // `prefix` names the directory's owner in /tmp (e.g. "maestro_rb_").
  explicit LlmFileTest(std::string prefix) : prefix_(std::move(prefix)) {}

  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           (prefix_ + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Writes `text` to `name` in the test's directory; returns its path.
  std::string Write(const std::string& name, const std::string& text) {
    std::string p = (dir_ / name).string();
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
  // The whole file ("" when it cannot be read).
  static std::string Slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }

  std::filesystem::path dir_;

 private:
  std::string prefix_;
};

}  // namespace maestro::llm::test_files
