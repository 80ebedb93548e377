#include "store/sql/migration.h"

namespace maestro::sql {

Result<bool> ApplyMigrationInTx(Conn& conn, const Migration& m, int64_t now_ms) {
  auto check = conn.Prepare("SELECT 1 FROM schema_migrations WHERE version = ?1");
  if (!check.ok()) return check.status();
  check->Bind(1, m.version);
  auto present = check->Step();
  if (!present.ok()) return present.status();
  if (*present) return false;
  MAESTRO_RETURN_IF_ERROR(conn.ExecScript(m.sql));
  auto ins =
      conn.Prepare("INSERT INTO schema_migrations(version, name, applied_at) VALUES (?1, ?2, ?3)");
  if (!ins.ok()) return ins.status();
  ins->Bind(1, m.version).Bind(2, m.name).Bind(3, now_ms);
  MAESTRO_RETURN_IF_ERROR(ins->Exec());
  return true;
}

Result<int> ReadSchemaVersion(Conn& conn) {
  auto s = conn.Prepare("SELECT COALESCE(MAX(version), 0) FROM schema_migrations");
  if (!s.ok()) return s.status();
  auto row = s->Step();
  if (!row.ok()) return row.status();
  return static_cast<int>(*row ? s->Int(0) : 0);
}

}  // namespace maestro::sql
