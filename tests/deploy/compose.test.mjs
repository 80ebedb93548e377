// deploy/compose.yaml for real under podman-compose: the two workers start
// first, then the API, then PostgreSQL last; the drill (park → approve →
// kill the worker mid-task → finished by the other) passes.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DB_PASSWORD, IMAGE, PG_IMAGE, TOKEN, api, parkApproveKillDrill, podman, run, waitFor }
  from './lib.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const deployDir = join(here, '..', '..', 'deploy');
const project = `maestro-compose-test-${process.pid}`;
const port = 19000 + (process.pid % 1000);
const base = `http://127.0.0.1:${port}`;
const dir = mkdtempSync(join(tmpdir(), 'maestro-compose-'));

// The topology as shipped, with the test's secrets in its env files and one
// override: the demo model plays the drill's script.
for (const f of ['compose.yaml', 'maestro.yaml']) cpSync(join(deployDir, f), join(dir, f));
cpSync(join(here, 'drill-script.yaml'), join(dir, 'drill-script.yaml'));
writeFileSync(join(dir, 'maestro.env'), readFileSync(join(deployDir, 'maestro.env.example'), 'utf8')
  .replace('maestro:change-me@', `maestro:${DB_PASSWORD}@`)
  .replace('change-me-to-a-long-random-token', TOKEN));
writeFileSync(join(dir, 'db.env'), readFileSync(join(deployDir, 'db.env.example'), 'utf8')
  .replace('POSTGRES_PASSWORD=change-me', `POSTGRES_PASSWORD=${DB_PASSWORD}`));
writeFileSync(join(dir, 'compose.drill.yaml'), `services:
  demo-llm:
    volumes:
      - ./drill-script.yaml:/etc/maestro/drill-script.yaml:ro
`);
const env = {
  MAESTRO_IMAGE: IMAGE, POSTGRES_IMAGE: PG_IMAGE, MAESTRO_PUBLISH: `127.0.0.1:${port}`,
  MAESTRO_DEMO_SCRIPT: '/etc/maestro/drill-script.yaml',
};
const compose = (...args) => run('podman-compose',
  ['-p', project, '-f', 'compose.yaml', '-f', 'compose.drill.yaml', ...args], { cwd: dir, env });
const container = (service) => `${project}_${service}_1`;
const log = (m) => console.log(`# compose: ${m}`);

after(() => {
  if (process.env.DEPLOY_TEST_KEEP) return console.log(`# kept: ${dir} (project ${project})`);
  try { compose('down', '-v', '-t', '5'); } catch (e) { console.log(`# down: ${e.message}`); }
  rmSync(dir, { recursive: true, force: true });
});

test('compose: workers first, then the API, the database last; park, approve, kill a worker, finish', async () => {
  compose('up', '-d', '--no-deps', 'worker-1', 'worker-2');
  // Nothing else is up: the workers wait (and say for what) instead of exiting.
  await new Promise((r) => setTimeout(r, 3000));
  for (const w of ['worker-1', 'worker-2']) {
    assert.equal(podman('inspect', '-f', '{{.State.Running}}', container(w)), 'true',
      `${w} exited: ${run('podman', ['logs', container(w)], { ok: [0, 125] }).err.slice(-1500)}`);
    const ready = run('podman', ['exec', container(w), 'curl', '-s', 'http://127.0.0.1:8081/api/ready'],
      { ok: [0, 22] }).out;
    log(`${w} before the database: ${ready}`);
    assert.match(ready, /"ready":\s*false/);
    assert.match(ready, /database|marker/);
  }
  compose('up', '-d', '--no-deps', 'demo-llm', 'api');
  await new Promise((r) => setTimeout(r, 2000));
  assert.equal(podman('inspect', '-f', '{{.State.Running}}', container('api')), 'true');
  compose('up', '-d', '--no-deps', 'db');

  await waitFor('the API to be ready', async () => (await api(base, 'GET', '/api/ready')).status === 200,
    { timeoutMs: 180_000, everyMs: 1000 });
  for (const w of ['worker-1', 'worker-2']) {
    await waitFor(`${w} to be ready`, () => run('podman',
      ['exec', container(w), 'curl', '-fs', 'http://127.0.0.1:8081/api/ready'], { ok: [0, 22] }).status === 0,
    { timeoutMs: 120_000, everyMs: 1000 });
  }
  log('all ready');
  const sql = (q) => run('podman', ['exec', container('db'), 'psql', '-U', 'maestro', '-d', 'maestro',
    '-tAc', q]).out;
  const result = await parkApproveKillDrill({
    base, sql, workers: [container('worker-1'), container('worker-2')], log,
  });
  log(`drill passed: killed ${result.killed}, finished by ${result.finishedBy}`);
});
