// The image: `podman run` of it serves the UI and completes a demo task
// through the REST API; its health check, user and labels are what
// deploy/Containerfile promises; SIGTERM drains and exits 0; without the
// runtime settings the sandbox needs, it refuses to start and says why.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { IMAGE, TOKEN, api, podman, run, taskStatus, waitFor } from './lib.mjs';

const name = `maestro-image-test-${process.pid}`;
const port = 18000 + (process.pid % 1000);
const base = `http://127.0.0.1:${port}`;
const sandboxOpts = ['--security-opt', 'systempaths=unconfined', '--security-opt', 'seccomp=unconfined',
  '--security-opt', 'apparmor=unconfined'];

after(() => {
  run('podman', ['rm', '-f', '-t', '0', name, `${name}-nosandbox`], { ok: [0, 1, 2] });
  run('podman', ['volume', 'rm', '-f', `${name}-data`], { ok: [0, 1] });
});

test('the image is labelled, runs as a non-root user and keeps /data as its volume', () => {
  const cfg = JSON.parse(podman('image', 'inspect', IMAGE))[0].Config;
  assert.equal(cfg.User, 'maestro');
  assert.ok(Object.keys(cfg.Volumes ?? {}).includes('/data'));
  assert.match(cfg.Labels['org.opencontainers.image.version'], /^\d+\.\d+\.\d+$/);
  assert.ok(cfg.Labels['org.opencontainers.image.source']);
  assert.ok(cfg.Labels['org.opencontainers.image.revision']);
  assert.deepEqual(cfg.Entrypoint, ['maestro']);
  const size = Number(podman('image', 'inspect', IMAGE, '--format', '{{.Size}}'));
  console.log(`# image ${IMAGE}: ${(size / 1e6).toFixed(0)} MB`);
});

let backup = '';
let backedUp = [];

test('podman run serves the UI and completes a demo task; SIGTERM drains and exits 0', async () => {
  podman('run', '-d', '--name', name, ...sandboxOpts, '-p', `127.0.0.1:${port}:8080`,
    '-v', `${name}-data:/data`, '-e', `MAESTRO_ADMIN_TOKEN=${TOKEN}`, IMAGE);
  await waitFor('the API to be ready', async () => (await api(base, 'GET', '/api/ready')).status === 200,
    { timeoutMs: 60_000 });
  const health = await api(base, 'GET', '/api/health');
  assert.equal(health.json.demo, true, 'no model configured: the bundled demo model answers');
  const page = await (await fetch(base + '/')).text();
  assert.match(page, /<div id="root">/, 'the web UI is served');
  // The image's own HEALTHCHECK passes.
  assert.equal(run('podman', ['healthcheck', 'run', name], { ok: [0, 1] }).status, 0);

  const created = await api(base, 'POST', '/api/local/tasks',
    { instruction: 'Demo: explain what maestro does', piece: 'chat' });
  assert.equal(created.status, 201, JSON.stringify(created.json));
  const taskId = created.json.task.id;
  const done = await waitFor('the demo task', async () => {
    const t = await taskStatus(base, taskId);
    return ['succeeded', 'failed'].includes(t.latest_job.status) ? t : null;
  }, { timeoutMs: 60_000 });
  assert.equal(done.latest_job.status, 'succeeded', JSON.stringify(done.latest_job));

  // A long task is running when SIGTERM comes: the server drains (the job is
  // handed back, not failed) and exits 0 well within the stop timeout.
  const long = await api(base, 'POST', '/api/local/tasks',
    { instruction: 'Demo: tell a long story', piece: 'chat' });
  assert.equal(long.status, 201);
  await waitFor('the long task to run', async () =>
    (await taskStatus(base, long.json.task.id)).latest_job.status === 'running');
  // An online backup while the job runs (the server keeps committing).
  backup = run('podman', ['exec', name, 'maestro', 'backup', '/data/backup.db']).out;
  console.log(`# backup while a job runs: ${backup.split('\n')[0]}`);
  backedUp = [taskId, long.json.task.id];
  const t0 = Date.now();
  podman('stop', '-t', '45', name);
  const stopMs = Date.now() - t0;
  const exit = Number(podman('inspect', '-f', '{{.State.ExitCode}}', name));
  const logs = run('podman', ['logs', name]).err + run('podman', ['logs', name]).out;
  assert.equal(exit, 0, logs.slice(-2000));
  assert.match(logs, /received signal 15/);
  assert.match(logs, /stopped/);
  console.log(`# SIGTERM with a running job: exited 0 after ${stopMs} ms`);

  // Started again on the same volume: every task is there, the drained one
  // is not lost (queued or running again, never failed).
  podman('start', name);
  await waitFor('the API again', async () => (await api(base, 'GET', '/api/ready')).status === 200,
    { timeoutMs: 60_000 });
  assert.equal((await taskStatus(base, taskId)).latest_job.status, 'succeeded');
  const again = (await taskStatus(base, long.json.task.id)).latest_job.status;
  assert.notEqual(again, 'failed');
  await api(base, 'POST', `/api/local/tasks/${long.json.task.id}/cancel`);
  assert.match(backup, /backup\.db/);
});

test('backup → wipe → restore: every task committed before the backup is there', async () => {
  assert.ok(backedUp.length, 'the backup was taken in the test before');
  podman('stop', '-t', '45', name);
  // The database goes; the backup file (in the same volume) is restored
  // with the server stopped, by the image's own `maestro restore`.
  run('podman', ['run', '--rm', '-v', `${name}-data:/data`, '--entrypoint', 'sh', IMAGE, '-c',
    'rm -f /data/maestro.db /data/maestro.db-wal /data/maestro.db-shm && maestro restore /data/backup.db']);
  podman('start', name);
  await waitFor('the API after the restore', async () =>
    (await api(base, 'GET', '/api/ready')).status === 200, { timeoutMs: 60_000 });
  for (const id of backedUp) {
    const t = await api(base, 'GET', `/api/local/tasks/${id}`);
    assert.equal(t.status, 200, `task ${id} after the restore: ${JSON.stringify(t.json)}`);
  }
  assert.equal((await taskStatus(base, backedUp[0])).latest_job.status, 'succeeded');
});

test('without the settings the sandbox needs the container refuses to start and says why', () => {
  // The runtime's defaults (masked /proc paths): bubblewrap cannot mount
  // its /proc, so RunCommand cannot be offered — a startup error, not a
  // silent downgrade.
  const r = run('podman', ['run', '--name', `${name}-nosandbox`, '-e', `MAESTRO_ADMIN_TOKEN=${TOKEN}`,
    IMAGE], { ok: [0, 1, 2], timeoutMs: 60_000 });
  assert.equal(r.status, 1, `${r.out}\n${r.err}`);
  assert.match(r.err, /Can't mount proc/);
  assert.match(r.err, /the-sandbox-in-a-container/);
  assert.match(r.err, /sandbox.required: false/);
});
