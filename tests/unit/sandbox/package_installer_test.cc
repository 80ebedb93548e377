// PackageInstaller: config validation, shell-safe commands, and a real
// install through bubblewrap with a test installer script
// (tests/support/installers/fake_installer.sh) against a real SqliteStore.
#include "sandbox/package_installer.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/store_fixture.h"

namespace maestro::tools {
namespace {

using maestro::testing::ReadWholeFile;

namespace fs = std::filesystem;

Json Section() {
  const std::string script = MAESTRO_TEST_INSTALLER;
  return {{"installers", {{"fakeeco", "/bin/sh " + script + " {target} {name} {version}"}}},
          {"readonly_paths", Json::array({fs::path(script).parent_path().string()})},
          {"timeout_seconds", 20}};
}

class PackageInstallerTest : public testing::StoreTest {
 protected:
  void SetUp() override {
    StoreTest::SetUp();
    task_ = NewTaskWith("chat");
    auto cfg = PackageInstallerConfigFrom(Section(), "maestro.yaml:3:1");
    ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
    sandbox_ = std::make_shared<Sandbox>(Sandbox::Probe());
    installer_ = std::make_unique<PackageInstaller>(*cfg, dir_.File("data"), sandbox_);
  }

  Request PackageRequest(const std::string& eco, const std::string& name,
                         const std::string& version = "1.2") {
    Request r;
    r.task_id = task_.task.id;
    r.job_id = task_.job.id;
    r.kind = RequestKind::kPackage;
    r.name = eco + ":" + name;
    r.args = {{"ecosystem", eco}, {"name", name}, {"version", version}};
    r.args_hash = "h-" + name;
    auto created = store_->CreateRequest(r);
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    auto decided = store_->DecideRequest(created->id, "approve", "", "alice");
    EXPECT_TRUE(decided.ok()) << decided.status().ToString();
    return *decided;
  }

  Store::CreatedTask task_;
  std::shared_ptr<Sandbox> sandbox_;
  std::unique_ptr<PackageInstaller> installer_;
};

TEST(PackageInstallerConfigTest, RejectsBadSectionsNamingTheKey) {
  EXPECT_TRUE(PackageInstallerConfigFrom(Json::object(), "f:1:1").ok());
  auto typo = PackageInstallerConfigFrom({{"installer", Json::object()}}, "f:1:1");
  ASSERT_FALSE(typo.ok());
  EXPECT_EQ(typo.status().field(), "packages.installer");
  EXPECT_NE(typo.status().message().find("f:1:1"), std::string::npos);
  EXPECT_FALSE(PackageInstallerConfigFrom({{"installers", {{"Bad Eco", "x"}}}}, "f").ok());
  EXPECT_FALSE(PackageInstallerConfigFrom({{"installers", {{"pip", ""}}}}, "f").ok());
  EXPECT_FALSE(PackageInstallerConfigFrom({{"readonly_paths", {"relative"}}}, "f").ok());
  EXPECT_FALSE(PackageInstallerConfigFrom({{"timeout_seconds", 0}}, "f").ok());
}

TEST_F(PackageInstallerTest, CommandQuotesValuesAndRefusesInjection) {
  auto cmd = installer_->CommandFor(PackageRequest("fakeeco", "left-pad", "1.2"));
  ASSERT_TRUE(cmd.ok()) << cmd.status().ToString();
  const std::string target = installer_->TargetDir(task_.task.id, "fakeeco");
  EXPECT_EQ(target, dir_.File("data") + "/tasks/" + task_.task.id + "/packages/fakeeco");
  EXPECT_NE(cmd->find("'" + target + "' 'left-pad' '1.2'"), std::string::npos) << *cmd;
  auto evil = installer_->CommandFor(PackageRequest("fakeeco", "x;rm -rf /"));
  ASSERT_FALSE(evil.ok());
  EXPECT_EQ(evil.status().field(), "name");
  auto evil_version = installer_->CommandFor(PackageRequest("fakeeco", "ok", "1' ; true '"));
  EXPECT_FALSE(evil_version.ok());
  auto unknown = installer_->CommandFor(PackageRequest("cargo", "serde"));
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("packages.installers"), std::string::npos);
}

TEST_F(PackageInstallerTest, ApprovedRequestInstallsOnceAndRecordsTheOutcome) {
  if (!sandbox_->available()) GTEST_SKIP() << sandbox_->unavailable_reason();
  Request r = PackageRequest("fakeeco", "left-pad", "1.2");
  ToolResult first = installer_->ResolveApproved(*store_, r, nullptr);
  EXPECT_FALSE(first.is_error) << first.content;
  const std::string target = installer_->TargetDir(task_.task.id, "fakeeco");
  EXPECT_NE(first.content.find("installed at " + target), std::string::npos) << first.content;
  EXPECT_EQ(ReadWholeFile(target + "/left-pad/INSTALLED"), "left-pad 1.2\n");

  auto outcome = FindInstallOutcome(*store_, task_.task.id, r.id);
  ASSERT_TRUE(outcome.ok() && outcome->has_value());
  EXPECT_EQ((**outcome)["status"], "installed");
  EXPECT_NE((**outcome)["output"].get<std::string>().find("installed left-pad 1.2"),
            std::string::npos);

  // A second re-entry answers from the recorded outcome: no second install.
  ToolResult again = installer_->ResolveApproved(*store_, r, nullptr);
  EXPECT_EQ(again.content, first.content);
  EXPECT_EQ(ReadWholeFile(target + "/.runs"), "run\n");
}

TEST_F(PackageInstallerTest, FailedInstallIsAnErrorWithTheOutput) {
  if (!sandbox_->available()) GTEST_SKIP() << sandbox_->unavailable_reason();
  Request r = PackageRequest("fakeeco", "fail-me");
  ToolResult res = installer_->ResolveApproved(*store_, r, nullptr);
  EXPECT_TRUE(res.is_error);
  EXPECT_EQ(res.content.rfind("Error:", 0), 0u);
  EXPECT_NE(res.content.find("exit code 3"), std::string::npos) << res.content;
  EXPECT_NE(res.content.find("no such package: fail-me"), std::string::npos) << res.content;
  auto outcome = FindInstallOutcome(*store_, task_.task.id, r.id);
  ASSERT_TRUE(outcome.ok() && outcome->has_value());
  EXPECT_EQ((**outcome)["status"], "failed");
}

TEST_F(PackageInstallerTest, InstallerCannotWriteOutsideItsTargetDir) {
  if (!sandbox_->available()) GTEST_SKIP() << sandbox_->unavailable_reason();
  const std::string outside = dir_.File("outside-marker");
  PackageInstallerConfig cfg;
  cfg.installers["sh"] = "touch " + outside + " ; touch {target}/inside";
  PackageInstaller inst(cfg, dir_.File("data"), sandbox_);
  Request r = PackageRequest("sh", "anything");
  InstallOutcome o = inst.Install(r, nullptr);
  EXPECT_FALSE(fs::exists(outside)) << "the installer wrote outside its target dir";
  EXPECT_TRUE(fs::exists(o.dir + "/inside"));
}

}  // namespace
}  // namespace maestro::tools
