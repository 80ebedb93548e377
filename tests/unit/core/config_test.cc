#include "core/config.h"

#include <gtest/gtest.h>

#include <fstream>
#include <vector>

#include "support/temp_dir.h"

namespace maestro {
namespace {

std::string Write(const testing::TempDir& dir, const std::string& text) {
  std::string path = dir.File("maestro.yaml");
  std::ofstream(path) << text;
  return path;
}

TEST(ConfigTest, DefaultsWithoutFileOrEnv) {
  auto cfg = LoadConfig(std::nullopt, {});
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  EXPECT_EQ(cfg->data_dir, "./data");
  EXPECT_EQ(cfg->listen_host, "127.0.0.1");
  EXPECT_EQ(cfg->listen_port, 8080);
}

TEST(ConfigTest, FileValuesAreOverriddenByEnvironment) {
  testing::TempDir dir;
  auto path = Write(dir,
                    "data_dir: /srv/maestro\n"
                    "workers: 4\n"
                    "llm:\n"
                    "  base_url: http://127.0.0.1:9000/v1\n"
                    "  model: qwen3\n"
                    "jobs:\n"
                    "  lease_ms: 20000\n"
                    "  retry:\n"
                    "    max_attempts: 7\n");
  auto cfg = LoadConfig(path, {{"MAESTRO_WORKERS", "8"},
                               {"MAESTRO_LISTEN", "127.0.0.1:9999"},
                               {"MAESTRO_LLM_MODEL", "llama"}});
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  EXPECT_EQ(cfg->data_dir, "/srv/maestro");
  EXPECT_EQ(cfg->workers, 8);
  EXPECT_EQ(cfg->listen_port, 9999);
  EXPECT_EQ(cfg->llm.base_url, "http://127.0.0.1:9000/v1");
  EXPECT_EQ(cfg->llm.model, "llama");
  EXPECT_EQ(cfg->jobs.lease_ms, 20000);
  EXPECT_EQ(cfg->jobs.retry.max_attempts, 7);
}

TEST(ConfigTest, DatabaseUrlSelectsPostgresAndIsChecked) {
  auto sqlite = LoadConfig(std::nullopt, {});
  ASSERT_TRUE(sqlite.ok());
  EXPECT_EQ(sqlite->database.url, "");  // SQLite in data_dir
  EXPECT_EQ(sqlite->database.pool_size, 8);
  EXPECT_TRUE(sqlite->database.notify);

  testing::TempDir dir;
  auto path = Write(dir,
                    "database_url: postgresql://maestro@db:5432/maestro\n"
                    "database:\n"
                    "  pool_size: 3\n"
                    "  notify: false\n");
  auto cfg = LoadConfig(path, {});
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  EXPECT_EQ(cfg->database.url, "postgresql://maestro@db:5432/maestro");
  EXPECT_EQ(cfg->database.pool_size, 3);
  EXPECT_FALSE(cfg->database.notify);

  auto env = LoadConfig(path, {{"MAESTRO_DATABASE_URL", "postgres://other@h/db"}});
  ASSERT_TRUE(env.ok()) << env.status().ToString();
  EXPECT_EQ(env->database.url, "postgres://other@h/db");

  auto bad = LoadConfig(std::nullopt, {{"MAESTRO_DATABASE_URL", "mysql://x"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("postgresql://"), std::string::npos);
  auto zero = LoadConfig(Write(dir, "database:\n  pool_size: 0\n"), {});
  EXPECT_FALSE(zero.ok());
}

TEST(ConfigTest, DelegateDepthDefaultsToTwoAndRejectsNegatives) {
  auto def = LoadConfig(std::nullopt, {});
  ASSERT_TRUE(def.ok());
  EXPECT_EQ(def->jobs.delegate_max_depth, 2);
  testing::TempDir dir;
  auto zero = LoadConfig(Write(dir, "jobs:\n  delegate_max_depth: 0\n"), {});
  ASSERT_TRUE(zero.ok()) << zero.status().ToString();
  EXPECT_EQ(zero->jobs.delegate_max_depth, 0);
  auto bad = LoadConfig(Write(dir, "jobs:\n  delegate_max_depth: -1\n"), {});
  EXPECT_FALSE(bad.ok());
}

TEST(ConfigTest, UnknownKeyNamesPositionAndNearestKey) {
  testing::TempDir dir;
  auto path = Write(dir, "data_dir: x\njobs:\n  lease_msec: 5\n");
  auto cfg = LoadConfig(path, {});
  ASSERT_FALSE(cfg.ok());
  EXPECT_EQ(cfg.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(cfg.status().message().find(path + ":3:3: unknown key 'jobs.lease_msec'"),
            std::string::npos)
      << cfg.status().message();
  EXPECT_NE(cfg.status().message().find("did you mean 'jobs.lease_ms'?"), std::string::npos);
}

TEST(ConfigTest, BadValuesAreRejectedWithTheKey) {
  testing::TempDir dir;
  auto cfg = LoadConfig(Write(dir, "workers: many\n"), {});
  ASSERT_FALSE(cfg.ok());
  EXPECT_EQ(cfg.status().field(), "workers");
  auto env = LoadConfig(std::nullopt, {{"MAESTRO_LISTEN", "nowhere"}});
  ASSERT_FALSE(env.ok());
  EXPECT_NE(env.status().message().find("MAESTRO_LISTEN"), std::string::npos);
  auto syntax = LoadConfig(Write(dir, "workers: [1,\n"), {});
  ASSERT_FALSE(syntax.ok());
  EXPECT_NE(syntax.status().message().find("maestro.yaml:"), std::string::npos);
}

TEST(ConfigTest, HeartbeatMustBeShorterThanLease) {
  testing::TempDir dir;
  auto cfg = LoadConfig(Write(dir, "jobs:\n  lease_ms: 1000\n  heartbeat_ms: 1000\n"), {});
  ASSERT_FALSE(cfg.ok());
  EXPECT_EQ(cfg.status().field(), "jobs.heartbeat_ms");
}

TEST(ConfigTest, UnknownMaestroVariablesAreWarnings) {
  auto cfg = LoadConfig(std::nullopt, {{"MAESTRO_WORKRES", "3"}});
  ASSERT_TRUE(cfg.ok());
  ASSERT_EQ(cfg->warnings.size(), 1u);
  EXPECT_NE(cfg->warnings[0].find("MAESTRO_WORKRES"), std::string::npos);
}

TEST(ConfigTest, TheClientVariablesAreKnownAndChangeNothing) {
  auto cfg = LoadConfig(std::nullopt, {{"MAESTRO_TOKEN", "t"}, {"MAESTRO_SERVER", "http://h:1"}});
  ASSERT_TRUE(cfg.ok());
  EXPECT_TRUE(cfg->warnings.empty()) << cfg->warnings[0];
  EXPECT_EQ(cfg->listen_port, 8080);
}

// Every documented variable is read by LoadConfig (no warning) and its
// default in the help is the default Config's value.
TEST(ConfigTest, TheSettingsTableDrivesTheEnvironmentAndTheHelp) {
  for (const SettingInfo& s : Settings()) {
    if (s.env.empty()) continue;
    auto cfg = LoadConfig(std::nullopt, {{s.env, s.default_of(Config{})}});
    // An empty default (e.g. llm.base_url) is a valid value for the string keys.
    ASSERT_TRUE(cfg.ok()) << s.env << ": " << cfg.status().ToString();
    EXPECT_TRUE(cfg->warnings.empty()) << s.env;
  }
  auto workers = LoadConfig(std::nullopt, {{"MAESTRO_WORKERS", "7"}});
  ASSERT_TRUE(workers.ok());
  EXPECT_EQ(workers->workers, 7);
  std::string help = SettingsHelp();
  EXPECT_NE(help.find("database_url"), std::string::npos) << help;
  EXPECT_NE(help.find("MAESTRO_DATABASE_URL"), std::string::npos) << help;
  EXPECT_NE(help.find("127.0.0.1:8080"), std::string::npos) << "listen's default: " << help;
  EXPECT_NE(help.find("MAESTRO_TOKEN"), std::string::npos) << help;
}

// The one key table: a documented row's variable, its file key and its help
// default address the same Config field. For each row with a variable, a probe
// value other than the default is set through the variable and through the
// file; the row then shows the probe for both (a setter and a help reading
// different fields, or a variable bound to another key, would fail here).
TEST(ConfigTest, EachDocumentedKeyIsOneFieldForItsVariableItsFileKeyAndItsHelp) {
  testing::TempDir dir;
  const std::vector<std::string> probes = {"7",
                                           "4096",
                                           "true",
                                           "false",
                                           "debug",
                                           "json",
                                           "llm",
                                           "anthropic",
                                           "always",
                                           "/srv/probe",
                                           "127.0.0.1:9",
                                           "mailto:ops@example.org",
                                           "http://127.0.0.1:4318",
                                           "postgresql://u@db/probe"};
  int rows = 0;
  for (const SettingInfo& s : Settings()) {
    if (s.env.empty() || s.key.empty()) continue;
    ++rows;
    const std::string def = s.default_of(Config{});
    bool probed = false;
    for (const std::string& probe : probes) {
      if (probe == def) continue;
      auto by_env = LoadConfig(std::nullopt, {{s.env, probe}});
      if (!by_env.ok()) continue;  // not a value of this key
      probed = true;
      EXPECT_EQ(s.default_of(*by_env), probe) << s.env;
      // The same value at the dotted key of the file, as nested mappings.
      std::string yaml, indent;
      std::string rest = s.key;
      for (size_t dot; (dot = rest.find('.')) != std::string::npos; rest = rest.substr(dot + 1)) {
        yaml += indent + rest.substr(0, dot) + ":\n";
        indent += "  ";
      }
      yaml += indent + rest + ": \"" + probe + "\"\n";
      auto by_file = LoadConfig(Write(dir, yaml), {});
      ASSERT_TRUE(by_file.ok()) << yaml << by_file.status().ToString();
      EXPECT_EQ(s.default_of(*by_file), probe) << s.key;
      EXPECT_TRUE(by_file->warnings.empty());
      break;
    }
    EXPECT_TRUE(probed) << s.env << ": no probe value is accepted";
  }
  EXPECT_GE(rows, 35);
}

// Both fractions of the table refuse what is not a number in [0, 1], NaN
// included (before the one table, jobs.retry.jitter took "nan" and every
// retry delay became NaN).
TEST(ConfigTest, FractionsRefuseNotANumber) {
  testing::TempDir dir;
  for (const std::string bad : {"nan", "NaN", "-0.1", "1.01", "0.5x", "", "inf"}) {
    auto jitter = LoadConfig(Write(dir, "jobs:\n  retry:\n    jitter: \"" + bad + "\"\n"), {});
    ASSERT_FALSE(jitter.ok()) << bad;
    EXPECT_EQ(jitter.status().field(), "jobs.retry.jitter") << bad;
    EXPECT_NE(jitter.status().message().find(":3:5: jobs.retry.jitter: expected a number between "
                                             "0 and 1, got '" +
                                             bad + "'"),
              std::string::npos)
        << jitter.status().message();
    auto ratio = LoadConfig(Write(dir, "telemetry:\n  sample_ratio: \"" + bad + "\"\n"), {});
    ASSERT_FALSE(ratio.ok()) << bad;
    EXPECT_EQ(ratio.status().field(), "telemetry.sample_ratio") << bad;
  }
  auto ok = LoadConfig(Write(dir, "jobs:\n  retry:\n    jitter: 0.5\n"), {});
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_DOUBLE_EQ(ok->jobs.retry.jitter, 0.5);
}

TEST(ConfigTest, ModelProfilesWithHeadersAndTimeouts) {
  testing::TempDir dir;
  auto path = Write(dir,
                    "llm:\n"
                    "  base_url: http://127.0.0.1:8081/v1\n"
                    "  model: qwen3\n"
                    "  headers: {X-Team: agents}\n"
                    "  idle_timeout_ms: 60000\n"
                    "llm_profiles:\n"
                    "  openai:\n"
                    "    base_url: https://api.example/v1\n"
                    "    api_key_env: OPENAI_API_KEY\n"
                    "    model: gpt\n"
                    "    stream: false\n"
                    "    max_attempts: 2\n");
  auto cfg = LoadConfig(path, {});
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  EXPECT_EQ(cfg->llm.extra_headers.at("X-Team"), "agents");
  EXPECT_EQ(cfg->llm.idle_timeout_ms, 60000);
  ASSERT_EQ(cfg->llm_profiles.count("openai"), 1u);
  const ModelProfile& o = cfg->llm_profiles.at("openai");
  EXPECT_EQ(o.api_key_env, "OPENAI_API_KEY");
  EXPECT_FALSE(o.stream);
  EXPECT_EQ(o.max_attempts, 2);
  EXPECT_TRUE(o.extra_headers.empty());

  auto bad = LoadConfig(Write(dir, "llm_profiles:\n  x:\n    modle: m\n"), {});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find(
                ":3:5: unknown key 'llm_profiles.x.modle'; did you mean 'llm_profiles.x.model'?"),
            std::string::npos)
      << bad.status().message();
}

TEST(ConfigTest, AttachmentLimitsAndTheVisionFlag) {
  testing::TempDir dir;
  Config defaults;
  EXPECT_EQ(defaults.attachments.max_bytes, 10 << 20);
  EXPECT_EQ(defaults.attachments.max_count, 10);
  EXPECT_EQ(defaults.attachments.max_total_bytes, 25 << 20);
  EXPECT_FALSE(defaults.llm.vision);
  auto cfg = LoadConfig(Write(dir,
                              "attachments:\n  max_bytes: 100\n  max_count: 3\n"
                              "llm:\n  vision: true\n"
                              "llm_profiles:\n  blind:\n    model: m\n  eyes:\n    vision: true\n"),
                        {{"MAESTRO_ATTACHMENTS_MAX_TOTAL_BYTES", "500"}});
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  EXPECT_EQ(cfg->attachments.max_bytes, 100);
  EXPECT_EQ(cfg->attachments.max_count, 3);
  EXPECT_EQ(cfg->attachments.max_total_bytes, 500);
  EXPECT_TRUE(cfg->llm.vision);
  EXPECT_FALSE(cfg->llm_profiles.at("blind").vision);
  EXPECT_TRUE(cfg->llm_profiles.at("eyes").vision);
  auto zero = LoadConfig(Write(dir, "attachments:\n  max_count: 0\n"), {});
  EXPECT_FALSE(zero.ok());
  auto bad = LoadConfig(std::nullopt, {{"MAESTRO_LLM_VISION", "yes"}});
  EXPECT_FALSE(bad.ok());
}

TEST(ConfigTest, PricesPerProfileInUsdPerMillionTokens) {
  testing::TempDir dir;
  auto cfg = LoadConfig(Write(dir,
                              "llm:\n"
                              "  model: qwen3\n"
                              "  price: {input: 0.5, cached_input: 0.05, output: 2}\n"
                              "llm_profiles:\n"
                              "  fast:\n"
                              "    model: small\n"
                              "    price:\n"
                              "      input: 1.25\n"
                              "      output: 10\n"
                              "  free:\n"
                              "    model: local\n"),
                        {});
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  ASSERT_TRUE(cfg->llm.price.has_value());
  EXPECT_DOUBLE_EQ(cfg->llm.price->input, 0.5);
  EXPECT_DOUBLE_EQ(cfg->llm.price->cached_input, 0.05);
  EXPECT_DOUBLE_EQ(cfg->llm.price->output, 2);
  const auto& fast = cfg->llm_profiles.at("fast").price;
  ASSERT_TRUE(fast.has_value());
  EXPECT_DOUBLE_EQ(fast->input, 1.25);
  EXPECT_DOUBLE_EQ(fast->cached_input, 1.25) << "cached_input defaults to input";
  EXPECT_DOUBLE_EQ(fast->output, 10);
  EXPECT_FALSE(cfg->llm_profiles.at("free").price.has_value());
}

// Issue 50: a profile names its provider; Anthropic's cache writes have
// their own price (default: input).
TEST(ConfigTest, ProvidersAndCacheWritePrices) {
  testing::TempDir dir;
  auto cfg =
      LoadConfig(Write(dir,
                       "llm:\n"
                       "  model: qwen3\n"
                       "llm_profiles:\n"
                       "  claude:\n"
                       "    provider: anthropic\n"
                       "    base_url: https://api.anthropic.com/v1\n"
                       "    model: claude-sonnet-4-5\n"
                       "    cache_ttl: 1h\n"
                       "    max_output_tokens: 4096\n"
                       "    price: {input: 3, cached_input: 0.3, cache_write: 6, output: 15}\n"
                       "  gem:\n"
                       "    provider: gemini\n"
                       "    model: gemini-2.5-flash\n"
                       "    price: {input: 0.3, output: 2.5}\n"),
                 {});
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  EXPECT_EQ(cfg->llm.provider, "openai") << "the default";
  EXPECT_EQ(cfg->llm.cache_ttl, "5m");
  const ModelProfile& claude = cfg->llm_profiles.at("claude");
  EXPECT_EQ(claude.provider, "anthropic");
  EXPECT_EQ(claude.cache_ttl, "1h");
  EXPECT_EQ(claude.max_output_tokens, 4096);
  EXPECT_DOUBLE_EQ(claude.price->cache_write, 6);
  const ModelProfile& gem = cfg->llm_profiles.at("gem");
  EXPECT_EQ(gem.provider, "gemini");
  EXPECT_DOUBLE_EQ(gem.price->cache_write, 0.3) << "cache_write defaults to input";

  auto bad = LoadConfig(Write(dir, "llm_profiles:\n  x:\n    provider: bedrock\n"), {});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find(":3:5"), std::string::npos) << bad.status().ToString();
  EXPECT_NE(bad.status().message().find("llm_profiles.x.provider"), std::string::npos)
      << bad.status().ToString();
  auto ttl = LoadConfig(Write(dir, "llm:\n  cache_ttl: 2h\n"), {});
  ASSERT_FALSE(ttl.ok());
  EXPECT_NE(ttl.status().message().find("llm.cache_ttl"), std::string::npos)
      << ttl.status().ToString();
}

TEST(ConfigTest, BadPricesAreErrorsNamingTheKeyAndPosition) {
  testing::TempDir dir;
  struct Case {
    std::string yaml, says, field;
  };
  for (const Case& c : std::vector<Case>{
           {"llm_profiles:\n  fast:\n    price: {input: -1, output: 2}\n",
            ":3:20: llm_profiles.fast.price.input must be a number >= 0",
            "llm_profiles.fast.price.input"},
           {"llm_profiles:\n  fast:\n    price:\n      input: cheap\n      output: 2\n",
            ":4:14: llm_profiles.fast.price.input must be a number >= 0 (USD per million tokens), "
            "got 'cheap'",
            "llm_profiles.fast.price.input"},
           {"llm:\n  price: {input: 1, output: [2]}\n", ":2:29: llm.price.output must be a number",
            "llm.price.output"},
           {"llm:\n  price: {input: 1}\n", ":2:10: llm.price.output is required",
            "llm.price.output"},
           {"llm:\n  price: {input: 1, output: 1, cache: 1}\n",
            ":2:32: unknown key 'llm.price.cache'", "llm.price.cache"},
           {"llm:\n  price: 3\n", ":2:10: llm.price must be a mapping", "llm.price"},
       }) {
    auto cfg = LoadConfig(Write(dir, c.yaml), {});
    ASSERT_FALSE(cfg.ok()) << c.yaml;
    EXPECT_EQ(cfg.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(cfg.status().message().find(c.says), std::string::npos) << c.yaml << "\n"
                                                                      << cfg.status().message();
    EXPECT_EQ(cfg.status().field(), c.field) << c.yaml;
  }
}

TEST(ConfigTest, ExplicitMissingFileIsAnError) {
  auto cfg = LoadConfig(std::string("/nonexistent/maestro.yaml"), {});
  ASSERT_FALSE(cfg.ok());
  EXPECT_EQ(cfg.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace maestro

namespace maestro {
namespace {

TEST(ConfigTest, PackagesSectionIsKeptWithItsPosition) {
  testing::TempDir dir;
  auto cfg = LoadConfig(
      Write(dir, "workers: 1\npackages:\n  installers:\n    pip: \"pip install {name}\"\n"), {});
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  EXPECT_EQ(cfg->packages["installers"]["pip"], "pip install {name}");
  EXPECT_NE(cfg->packages_where.find("maestro.yaml:2:"), std::string::npos) << cfg->packages_where;
  auto scalar = LoadConfig(Write(dir, "packages: pip\n"), {});
  ASSERT_FALSE(scalar.ok());
  EXPECT_EQ(scalar.status().field(), "packages");
  auto typo = LoadConfig(Write(dir, "pakages: {}\n"), {});
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.status().message().find("packages"), std::string::npos) << typo.status().message();
}

TEST(ConfigTest, SpacesAreReadWithTheirPolicy) {
  testing::TempDir dir;
  auto cfg = LoadConfig(Write(dir,
                              "spaces:\n"
                              "  docs:\n"
                              "    path: /srv/docs\n"
                              "    description: Team docs\n"
                              "    tools: [ReadFile, WriteFile]\n"
                              "    edit_allowed: true\n"
                              "    shell_allowed: true\n"
                              "    network_allowed: true\n"
                              "  notes:\n"
                              "    path: /srv/notes\n"),
                        {});
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  ASSERT_EQ(cfg->spaces.size(), 2u);
  const SpaceConfig& d = cfg->spaces.at("docs");
  EXPECT_EQ(d.path, "/srv/docs");
  EXPECT_EQ(d.description, "Team docs");
  EXPECT_EQ(d.tools, (std::vector<std::string>{"ReadFile", "WriteFile"}));
  EXPECT_TRUE(d.edit_allowed && d.shell_allowed && d.network_allowed);
  const SpaceConfig& n = cfg->spaces.at("notes");
  EXPECT_FALSE(n.edit_allowed || n.shell_allowed || n.network_allowed);
  EXPECT_TRUE(n.tools.empty());
}

TEST(ConfigTest, McpServersAreKeptForSrcMcpAndSpacesNameTheirs) {
  testing::TempDir dir;
  auto cfg = LoadConfig(Write(dir,
                              "mcp_servers:\n"
                              "  fs:\n"
                              "    command: node\n"
                              "    args: [srv.js, 8080]\n"
                              "spaces:\n"
                              "  docs:\n"
                              "    path: /srv/docs\n"
                              "    mcp_servers: [fs]\n"
                              "  open:\n"
                              "    path: /srv/open\n"),
                        {});
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  EXPECT_EQ(cfg->mcp_servers["fs"]["command"], "node");
  EXPECT_NE(cfg->mcp_servers_where.find(":1:"), std::string::npos) << cfg->mcp_servers_where;
  ASSERT_TRUE(cfg->spaces.at("docs").mcp_servers.has_value());
  EXPECT_EQ(*cfg->spaces.at("docs").mcp_servers, std::vector<std::string>{"fs"});
  EXPECT_FALSE(cfg->spaces.at("open").mcp_servers.has_value()) << "unset: every server";
  auto bad =
      LoadConfig(Write(dir, "spaces:\n  docs:\n    path: /srv/docs\n    mcp_servers: fs\n"), {});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().field(), "spaces.docs.mcp_servers") << bad.status().ToString();
}

TEST(ConfigTest, SandboxLimitsAreReadGloballyAndPerSpace) {
  testing::TempDir dir;
  auto cfg = LoadConfig(Write(dir,
                              "sandbox:\n"
                              "  limits: {processes: 100, open_files: 64}\n"
                              "spaces:\n"
                              "  build:\n"
                              "    path: /srv/build\n"
                              "    shell_allowed: true\n"
                              "    limits: {processes: 2048}\n"),
                        {});
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  EXPECT_EQ(cfg->sandbox["limits"]["processes"].get<int64_t>(), 100);
  EXPECT_EQ(cfg->spaces.at("build").limits["processes"].get<int64_t>(), 2048);
  auto bad = LoadConfig(Write(dir, "spaces:\n  b:\n    path: /x\n    limits: 5\n"), {});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().field(), "spaces.b.limits");
}

TEST(ConfigTest, SpaceErrorsNameTheKey) {
  testing::TempDir dir;
  struct Case {
    std::string yaml;
    std::string field;
  };
  for (const Case& c : std::vector<Case>{
           {"spaces:\n  docs:\n    path: relative/dir\n", "spaces.docs.path"},
           {"spaces:\n  docs:\n    description: no path\n", "spaces.docs.path"},
           {"spaces:\n  docs:\n    path: /x\n    edit_alowed: true\n", "spaces.docs.edit_alowed"},
           {"spaces:\n  docs:\n    path: /x\n    shell_allowed: maybe\n",
            "spaces.docs.shell_allowed"},
           {"spaces:\n  docs:\n    path: /x\n    network_allowed: true\n",
            "spaces.docs.network_allowed"},
           {"spaces:\n  docs:\n    path: /x\n    tools: ReadFile\n", "spaces.docs.tools"},
           {"spaces:\n  docs:\n    path: /x\n    grounded: true\n", "spaces.docs.grounded"},
           {"spaces:\n  docs:\n    path: /x\n    piece: [a]\n", "spaces.docs.piece"},
           {"spaces:\n  'my space':\n    path: /x\n", "spaces.my space"},
           {"spaces: [docs]\n", "spaces"},
       }) {
    auto cfg = LoadConfig(Write(dir, c.yaml), {});
    ASSERT_FALSE(cfg.ok()) << c.yaml;
    EXPECT_EQ(cfg.status().field(), c.field) << c.yaml << cfg.status().message();
    EXPECT_NE(cfg.status().message().find("maestro.yaml:"), std::string::npos)
        << "names file:line:col: " << cfg.status().message();
  }
  auto typo = LoadConfig(Write(dir, "spaces:\n  docs:\n    path: /x\n    edit_alowed: true\n"), {});
  EXPECT_NE(typo.status().message().find("did you mean 'edit_allowed'"), std::string::npos)
      << typo.status().message();
}

}  // namespace
}  // namespace maestro
