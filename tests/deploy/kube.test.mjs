// deploy/k8s under `podman kube play`: the workers' Deployment is played
// first, then the API's, then PostgreSQL's; the drill (park → approve → kill
// a worker pod mid-task → finished by the other) passes.
//
// What podman kube play does not have, and what the test does instead:
// Services (pods find each other by pod name on a DNS-enabled network, so
// the Secret's database host is the PostgreSQL pod's name), Secret objects
// (made with `podman secret create`, which secretKeyRef reads), kustomize
// image rewrites (the images are the locally built ones), PodDisruptionBudgets
// (checked for shape only); and podman 4.3 publishes every containerPort on
// the host, so the played copies leave the ports out; and it ignores
// procMount (podman 4.7 has it), so the played workers are privileged
// instead — the one setting that lets bubblewrap mount its /proc there.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { DB_PASSWORD, IMAGE, PG_IMAGE, TOKEN, api, parkApproveKillDrill, podman, run, waitFor }
  from './lib.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const k8s = join(here, '..', '..', 'deploy', 'k8s');
const net = `maestro-kube-test-${process.pid}`;
const llm = `${net}-llm`;
const dir = mkdtempSync(join(tmpdir(), 'maestro-kube-'));
const log = (m) => console.log(`# kube: ${m}`);
const docs = (file) => YAML.parseAllDocuments(readFileSync(join(k8s, file), 'utf8')).map((d) => d.toJS());
const played = [];

function cleanup() {
  for (const f of played.reverse()) run('podman', ['kube', 'down', f], { ok: [0, 125] });
  // A play that failed half-way leaves pods kube down does not know.
  run('podman', ['pod', 'rm', '-f', '-t', '0', 'maestro-worker-pod-0', 'maestro-worker-pod-1',
    'maestro-api-pod-0', 'maestro-postgres-pod-0'], { ok: [0, 1, 125] });
  run('podman', ['rm', '-f', '-t', '0', llm], { ok: [0, 1] });
  run('podman', ['volume', 'rm', '-f', 'maestro-data', 'maestro-pgdata'], { ok: [0, 1] });
  run('podman', ['secret', 'rm', 'maestro-secrets'], { ok: [0, 125] });
  run('podman', ['network', 'rm', '-f', net], { ok: [0, 1, 125] });
}
after(() => {
  if (process.env.DEPLOY_TEST_KEEP) return console.log(`# kept: ${dir} (network ${net})`);
  cleanup();
  rmSync(dir, { recursive: true, force: true });
});

// One file for `podman kube play`: the kinds it plays, images rewritten.
function playable(files, name) {
  const out = [];
  for (const f of files) {
    for (const d of docs(f)) {
      if (!['Deployment', 'PersistentVolumeClaim', 'ConfigMap'].includes(d.kind)) continue;
      // hostUsers: false is podman's --userns=auto there, which needs
      // subordinate id ranges this host does not have; the privileged
      // workers below need no user namespace of the pod's own.
      if (d.spec?.template?.spec) delete d.spec.template.spec.hostUsers;
      for (const c of d.spec?.template?.spec?.containers ?? []) {
        if (c.image.startsWith('localhost/maestro')) c.image = IMAGE;
        if (c.image.includes('postgres')) c.image = PG_IMAGE;
        // podman 4.3 publishes every containerPort on the host (two worker
        // pods would collide): the ports go, probes name the number.
        const numbers = Object.fromEntries((c.ports ?? []).map((p) => [p.name, p.containerPort]));
        delete c.ports;
        for (const probe of [c.readinessProbe, c.livenessProbe, c.startupProbe]) {
          if (probe?.httpGet && numbers[probe.httpGet.port]) probe.httpGet.port = numbers[probe.httpGet.port];
        }
        if (c.securityContext?.procMount === 'Unmasked') {
          delete c.securityContext.procMount;
          c.securityContext.privileged = true;
          delete c.securityContext.allowPrivilegeEscalation;
        }
      }
      out.push(d);
    }
  }
  const path = join(dir, name);
  writeFileSync(path, out.map((d) => YAML.stringify(d)).join('---\n'));
  played.push(path);
  return path;
}

test('the manifests are complete: probes, resources, RWX data volume, disruption budgets', () => {
  const all = ['config.yaml', 'data-volume.yaml', 'postgres.yaml', 'api.yaml', 'worker.yaml',
    'disruption-budgets.yaml'].flatMap(docs);
  const kustom = YAML.parse(readFileSync(join(k8s, 'kustomization.yaml'), 'utf8'));
  assert.equal(kustom.resources.length, 6);
  const pvc = all.find((d) => d.kind === 'PersistentVolumeClaim' && d.metadata.name === 'maestro-data');
  assert.deepEqual(pvc.spec.accessModes, ['ReadWriteMany']);
  for (const name of ['maestro-api', 'maestro-worker']) {
    const dep = all.find((d) => d.kind === 'Deployment' && d.metadata.name === name);
    const c = dep.spec.template.spec.containers[0];
    assert.equal(c.readinessProbe.httpGet.path, '/api/ready', name);
    assert.equal(c.livenessProbe.httpGet.path, '/api/live', name);
    assert.ok(c.resources.requests.cpu && c.resources.requests.memory, name);
    assert.ok(dep.spec.template.spec.terminationGracePeriodSeconds > 30, name);
    assert.ok(all.find((d) => d.kind === 'PodDisruptionBudget' && d.metadata.name === name), name);
  }
  // The workers' sandbox settings (the API runs no job and needs none).
  const worker = all.find((d) => d.metadata.name === 'maestro-worker').spec.template.spec;
  assert.equal(worker.securityContext.seccompProfile.type, 'Unconfined');
  assert.equal(worker.containers[0].securityContext.procMount, 'Unmasked');
  assert.equal(worker.hostUsers, false);
  assert.ok(all.find((d) => d.kind === 'Service' && d.metadata.name === 'maestro-api'));
});

test('podman kube play: workers first, the API, PostgreSQL last; park, approve, kill a worker, finish', async () => {
  cleanup();
  run('podman', ['network', 'create', net]);
  // The Secret, as podman kube play reads one: a JSON map of base64 values.
  const secret = docs('secret.example.yaml')[0].stringData;
  secret['database-url'] = `postgresql://maestro:${DB_PASSWORD}@maestro-postgres-pod-0:5432/maestro`;
  secret['postgres-password'] = DB_PASSWORD;
  secret['admin-token'] = TOKEN;
  secret['llm-base-url'] = `http://${llm}:8081/v1`;
  const b64 = Object.fromEntries(Object.entries(secret).map(([k, v]) => [k, Buffer.from(v).toString('base64')]));
  const secretFile = join(dir, 'secret.json');
  writeFileSync(secretFile, JSON.stringify(b64), { mode: 0o600 });
  run('podman', ['secret', 'create', 'maestro-secrets', secretFile]);
  // The model server the Secret names: the scripted drill model.
  podman('run', '-d', '--name', llm, '--network', net, '-v', `${join(here, 'drill-script.yaml')}:/drill.yaml:ro`,
    '--entrypoint', 'maestro-fakellm', IMAGE, '--host', '0.0.0.0', '--port', '8081', '--script', '/drill.yaml');

  run('podman', ['kube', 'play', '--network', net, playable(['config.yaml', 'data-volume.yaml', 'worker.yaml'], 'workers.yaml')]);
  const workers = ['maestro-worker-pod-0-worker', 'maestro-worker-pod-1-worker'];
  await new Promise((r) => setTimeout(r, 3000));
  for (const w of workers) {
    assert.equal(podman('inspect', '-f', '{{.State.Running}}', w), 'true',
      `${w} exited: ${run('podman', ['logs', w], { ok: [0, 125] }).err.slice(-1500)}`);
  }
  for (const w of workers) {
    const ready = run('podman', ['exec', w, 'curl', '-s', 'http://127.0.0.1:8081/api/ready']).out;
    log(`${w} before the database: ${ready}`);
    assert.match(ready, /"ready":\s*false/);
  }
  run('podman', ['kube', 'play', '--network', net, playable(['config.yaml', 'api.yaml'], 'api.yaml')]);
  run('podman', ['kube', 'play', '--network', net, playable(['postgres.yaml'], 'postgres.yaml')]);

  const ip = JSON.parse(podman('inspect', 'maestro-api-pod-0-api', '--format', '{{json .NetworkSettings.Networks}}'))[net].IPAddress;
  const base = `http://${ip}:8080`;
  await waitFor('the API to be ready', async () => (await api(base, 'GET', '/api/ready')).status === 200,
    { timeoutMs: 180_000, everyMs: 1000 });
  for (const w of workers) {
    await waitFor(`${w} to be ready`, () => run('podman',
      ['exec', w, 'curl', '-fs', 'http://127.0.0.1:8081/api/ready'], { ok: [0, 7, 22] }).status === 0,
    { timeoutMs: 120_000, everyMs: 1000 });
  }
  log('all ready');
  const sql = (q) => run('podman', ['exec', 'maestro-postgres-pod-0-postgres', 'psql', '-U', 'maestro',
    '-d', 'maestro', '-tAc', q]).out;
  const result = await parkApproveKillDrill({ base, sql, workers, log });
  log(`drill passed: killed ${result.killed}, finished by ${result.finishedBy}`);
});
