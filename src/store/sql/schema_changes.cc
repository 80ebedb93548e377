#include "store/sql/schema_changes.h"

namespace maestro::sql {

// Append only: never edit a change that has shipped.
const std::vector<SchemaChange>& SchemaChanges() {
  static const std::vector<SchemaChange> c = {
      {11, "web push subscriptions",
       // A browser's Web Push subscription (issue 45 item 6): the push
       // service's endpoint and the browser's keys (base64url), per user.
       R"sql(
CREATE TABLE push_subscriptions (
  id         TEXT PRIMARY KEY,
  owner      TEXT NOT NULL,
  endpoint   TEXT NOT NULL,
  p256dh     TEXT NOT NULL,
  auth       TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  UNIQUE (owner, endpoint)
);
)sql",
       R"sql(
CREATE TABLE push_subscriptions (
  id         TEXT PRIMARY KEY,
  owner      TEXT NOT NULL,
  endpoint   TEXT NOT NULL,
  p256dh     TEXT NOT NULL,
  auth       TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  UNIQUE (owner, endpoint)
);
)sql"},
  };
  return c;
}

std::vector<Migration> WithSharedChanges(std::vector<Migration> history, bool postgres) {
  for (const SchemaChange& c : SchemaChanges()) {
    history.push_back(Migration{c.version, c.name, postgres ? c.postgres : c.sqlite});
  }
  return history;
}

}  // namespace maestro::sql
