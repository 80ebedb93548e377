// The `push:` section (Web Push, notify/push_dispatcher.h): its defaults,
// its keys from the file and the environment, and errors that name the key
// and the file:line:col.
#include <gtest/gtest.h>

#include <fstream>

#include "core/config.h"
#include "support/temp_dir.h"

namespace maestro {
namespace {

std::string WritePushYaml(const testing::TempDir& dir, const std::string& text) {
  std::string path = dir.File("maestro.yaml");
  std::ofstream(path) << text;
  return path;
}

TEST(ConfigPushTest, DefaultsFileAndEnvironment) {
  auto defaults = LoadConfig(std::nullopt, {});
  ASSERT_TRUE(defaults.ok());
  EXPECT_TRUE(defaults->push.enabled);
  EXPECT_EQ(defaults->push.subject, "");
  EXPECT_EQ(defaults->push.key_file, "");
  EXPECT_EQ(defaults->push.max_subscriptions_per_user, 10);

  testing::TempDir dir;
  auto cfg = LoadConfig(WritePushYaml(dir,
                                      "push:\n  enabled: false\n  subject: mailto:ops@example.com\n"
                                      "  key_file: /etc/maestro/vapid.pem\n"
                                      "  max_subscriptions_per_user: 3\n"),
                        {{"MAESTRO_PUSH_SUBJECT", "https://ops.example.com/contact"}});
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  EXPECT_FALSE(cfg->push.enabled);
  EXPECT_EQ(cfg->push.subject, "https://ops.example.com/contact");
  EXPECT_EQ(cfg->push.key_file, "/etc/maestro/vapid.pem");
  EXPECT_EQ(cfg->push.max_subscriptions_per_user, 3);
  EXPECT_NE(SettingsHelp().find("push.subject"), std::string::npos);
}

TEST(ConfigPushTest, ErrorsNameTheKeyAndPosition) {
  testing::TempDir dir;
  struct Case {
    std::string yaml, where, field;
  };
  for (const Case& c : {
           Case{"push:\n  subject: ops@example.com\n",
                ":2:3: push.subject: expected a mailto: or https:", "push.subject"},
           Case{"push:\n  subject: http://ops.example.com\n", ":2:3:", "push.subject"},
           Case{"push:\n  enabled: yes please\n", ":2:3:", "push.enabled"},
           Case{"push:\n  max_subscriptions_per_user: 0\n",
                ":2:3:", "push.max_subscriptions_per_user"},
           Case{"push:\n  subjet: mailto:a@b\n",
                ":2:3: unknown key 'push.subjet'; did you mean "
                "'push.subject'?",
                "push.subjet"},
       }) {
    const std::string path = WritePushYaml(dir, c.yaml);
    auto cfg = LoadConfig(path, {});
    ASSERT_FALSE(cfg.ok()) << c.yaml;
    EXPECT_EQ(cfg.status().field(), c.field) << c.yaml;
    EXPECT_NE(cfg.status().message().find(path + c.where), std::string::npos)
        << c.yaml << ": " << cfg.status().message();
  }
}

}  // namespace
}  // namespace maestro
