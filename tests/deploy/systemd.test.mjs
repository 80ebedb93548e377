// deploy/systemd/maestro.service: systemd itself checks it (systemd-analyze
// verify, with ExecStart pointed at this checkout's binary), and it keeps
// the hardening and the drain settings the README promises.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { run } from './lib.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const unit = readFileSync(join(root, 'deploy', 'systemd', 'maestro.service'), 'utf8');

test('systemd-analyze verify accepts the unit', () => {
  const bin = join(root, 'build', 'release', 'src', 'cli', 'maestro');
  assert.ok(existsSync(bin), `${bin} is built by scripts/image.sh --prebuilt`);
  const dir = mkdtempSync(join(tmpdir(), 'maestro-unit-'));
  try {
    const path = join(dir, 'maestro.service');
    writeFileSync(path, unit.replaceAll('/opt/maestro/bin/maestro', bin));
    const r = run('systemd-analyze', ['verify', path], { ok: [0, 1] });
    // Only lines about this unit count (the host's own units may warn).
    const ours = r.err.split('\n').filter((l) => l.includes('maestro.service'));
    assert.deepEqual(ours, [], r.err);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the unit drains on SIGTERM and is hardened', () => {
  for (const line of ['KillSignal=SIGTERM', 'TimeoutStopSec=45', 'NoNewPrivileges=yes', 'DynamicUser=yes',
    'ProtectSystem=strict', 'ProtectHome=yes', 'PrivateTmp=yes', 'CapabilityBoundingSet=',
    'StateDirectory=maestro']) {
    assert.ok(unit.split('\n').includes(line), line);
  }
});
