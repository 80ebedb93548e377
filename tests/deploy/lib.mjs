// Shared helpers of the deploy tests: podman commands, the REST API, and
// the park → approve → kill-the-worker → finish drill both topologies run.
import { execFileSync, spawnSync } from 'node:child_process';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';

export const TOKEN = 'deploy-test-admin-token-0123456789';
export const DB_PASSWORD = 'deploy-test-db-password';
export const IMAGE = process.env.MAESTRO_IMAGE || 'localhost/maestro:latest';
export const PG_IMAGE = process.env.POSTGRES_IMAGE || 'localhost/maestro-postgres:15';

// Runs a command; returns stdout. Throws with stderr on a non-zero exit
// unless `ok` lists the exit codes to accept.
export function run(cmd, args, { input, ok = [0], env, cwd, timeoutMs = 300_000 } = {}) {
  const r = spawnSync(cmd, args, {
    input, env: { ...process.env, ...env }, cwd, encoding: 'utf8', timeout: timeoutMs,
    maxBuffer: 64 << 20,
  });
  if (r.error) throw r.error;
  if (!ok.includes(r.status)) {
    throw new Error(`${cmd} ${args.join(' ')} → exit ${r.status}\n${r.stdout}\n${r.stderr}`);
  }
  return { out: r.stdout.trim(), err: r.stderr.trim(), status: r.status };
}

export const podman = (...args) => run('podman', args).out;

export async function waitFor(what, fn, { timeoutMs = 40_000, everyMs = 500 } = {}) {
  const end = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > end) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${last.message}` : ''}`);
    }
    await sleep(everyMs);
  }
}

export async function api(base, method, path, body) {
  const res = await fetch(base + path, {
    method,
    headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  let json;
  try { json = JSON.parse(text); } catch { json = { text }; }
  return { status: res.status, json };
}

export async function taskStatus(base, taskId) {
  const r = await api(base, 'GET', `/api/local/tasks/${taskId}`);
  assert.equal(r.status, 200, JSON.stringify(r.json));
  return r.json;
}

// The container whose hostname is the first part of `workerId`
// ("hostname:pid:n", the store's worker_id).
export function containerOfWorker(workerId, containers) {
  const host = workerId.split(':')[0];
  return containers.find((c) => podman('inspect', '-f', '{{.Config.Hostname}}', c) === host);
}

// The drill: a task parks on an approval; it is approved; while the
// approved job streams its answer the worker container running it is
// SIGKILLed; the job's lease lapses and another worker finishes it.
// `sql(query)` answers from the topology's PostgreSQL; `workers` are the
// worker containers' names.
export async function parkApproveKillDrill({ base, sql, workers, log }) {
  const created = await api(base, 'POST', '/api/local/tasks', {
    instruction: 'deploy drill: write the drill file', piece: 'chat',
  });
  assert.equal(created.status, 201, JSON.stringify(created.json));
  const taskId = created.json.task.id;
  const jobId = created.json.job.id;
  log(`drill task ${taskId} job ${jobId}`);

  const parked = await waitFor('the approval request', async () => {
    const r = await api(base, 'GET', `/api/local/tasks/${taskId}/tool-requests`);
    return r.json.requests?.find((q) => q.status === 'pending');
  });
  const shown = await taskStatus(base, taskId);
  assert.equal(shown.latest_job.status, 'waiting_human', 'the job parks while it waits');
  const decided = await api(base, 'POST',
    `/api/local/tasks/${taskId}/tool-requests/${parked.id}/decide`, { decision: 'approve', scope: 'once' });
  assert.equal(decided.status, 200, JSON.stringify(decided.json));
  log('approved');

  // Running again after the approval: find the worker holding it.
  const workerId = await waitFor('the approved job to be claimed', async () => {
    const row = sql(`SELECT status, COALESCE(worker_id,'') FROM jobs WHERE id = '${jobId}'`);
    const [status, worker] = row.split('|');
    return status === 'running' && worker ? worker : null;
  });
  const victim = containerOfWorker(workerId, workers);
  assert.ok(victim, `no worker container has the hostname of ${workerId}`);
  await sleep(2000);  // mid-stream (the reply streams for about 10 s)
  log(`killing ${victim} (worker ${workerId}) mid-stream`);
  podman('kill', '--signal', 'KILL', victim);

  const done = await waitFor('the task to finish on another worker', async () => {
    const t = await taskStatus(base, taskId);
    return ['succeeded', 'failed', 'cancelled'].includes(t.latest_job.status) ? t : null;
  }, { timeoutMs: 150_000, everyMs: 1000 });
  assert.equal(done.latest_job.status, 'succeeded', JSON.stringify(done.latest_job));
  const finalWorker = sql(`SELECT COALESCE(worker_id,'') FROM jobs WHERE id = '${jobId}'`);
  log(`finished by ${finalWorker}`);
  const attempts = Number(sql(`SELECT attempt FROM jobs WHERE id = '${jobId}'`));
  assert.ok(attempts >= 1, 'the job was claimed again after the kill');
  assert.match(JSON.stringify(done.latest_job.result ?? ''), /drill finished/);
  return { taskId, jobId, killed: victim, finishedBy: finalWorker };
}
