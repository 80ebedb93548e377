// Unit tests of src/feed.ts (bundled with esbuild, which Vite brings): one
// card per logical call — the deltas' park + replay, a model's re-issue with
// a new id, the ledger's cards after a restart, de-duplication by
// (job_id, call_id) and the waiting state.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

let feed;
before(async () => {
  const out = join(mkdtempSync(join(tmpdir(), 'maestro-feed-')), 'feed.mjs');
  const src = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'src', 'feed.ts');
  await build({ entryPoints: [src], bundle: true, format: 'esm', platform: 'node', outfile: out, logLevel: 'error' });
  feed = await import(pathToFileURL(out).href);
});

const job = (status, id = 'J1') => ({ id, task_id: 'T', status, piece: 'chat', attempt: 1, max_attempts: 3, wait_reason: status === 'waiting_human' ? 'tool_request' : '', resume_movement: '', error_message: '', result: '', next_retry_at: 0, created_at: 1, started_at: 1, finished_at: 0 });
let seq = 0;
const d = (o) => ({ seq: ++seq, at: 1000 + seq, ...o });
const call = (id, name, args) => [d({ type: 'tool_call', index: 0, id, name, arguments: '' }), d({ type: 'tool_call', index: 0, id: '', name: '', arguments: JSON.stringify(args) })];
const result = (id, name, content) => d({ type: 'tool_result', id, name, content, is_error: false });
const cards = (items) => items.filter((i) => i.kind === 'tool').map((i) => i.card);
const ARGS = { tool: 'WriteFile', arguments: { path: 'a' } };

test('a parked RequestTool waits, and its replay on resume is the same card', () => {
  const parked = [d({ type: 'movement', movement: 'chat' }), ...call('c1', 'RequestTool', ARGS), result('c1', 'RequestTool', 'Request R created; the task waits')];
  let c = cards(feed.buildFeed([job('waiting_human')], [], { J1: parked }));
  assert.equal(c.length, 1);
  assert.equal(c[0].waiting, true);
  const resumed = [...parked, d({ type: 'movement', movement: 'chat' }), ...call('c1', 'RequestTool', ARGS), result('c1', 'RequestTool', 'Approved (request R)')];
  c = cards(feed.buildFeed([job('succeeded')], [], { J1: resumed }));
  assert.equal(c.length, 1, 'one card for the park and the replay');
  assert.equal(c[0].result, 'Approved (request R)');
  assert.match(c[0].parkNote, /created/);
  assert.ok(!c[0].waiting);
});

test("a model's re-issue (a new id, the same tool and arguments) folds into the park's card", () => {
  const ds = [d({ type: 'movement', movement: 'chat' }), ...call('c1', 'RequestTool', ARGS), result('c1', 'RequestTool', 'created'),
    d({ type: 'movement', movement: 'chat' }), ...call('c9', 'RequestTool', ARGS), result('c9', 'RequestTool', 'Approved'),
    ...call('c10', 'WriteFile', { path: 'a', content: 'x' }), result('c10', 'WriteFile', 'wrote 1 bytes')];
  const c = cards(feed.buildFeed([job('succeeded')], [], { J1: ds }));
  assert.deepEqual(c.map((x) => [x.name, x.result]), [['RequestTool', 'Approved'], ['WriteFile', 'wrote 1 bytes']]);
});

test('after a restart (no deltas) the ledger gives the cards, deduplicated by (job_id, call_id)', () => {
  const ledger = [
    { job_id: 'J1', call_id: 'c1', tool: 'RequestTool', args: ARGS, status: 'waiting', result: 'created', duration_ms: 0, started_at: 5 },
    { job_id: 'J1', call_id: 'c1', tool: 'RequestTool', args: ARGS, status: 'finished', result: 'Approved', duration_ms: 900, started_at: 5 },
    { job_id: 'J1', call_id: 'c2', tool: 'WriteFile', args: { path: 'a', content: 'x' }, status: 'finished', result: 'wrote', duration_ms: 12, started_at: 6 },
    { job_id: 'J2', call_id: 'c1', tool: 'ReadFile', args: { path: 'a' }, status: 'error', result: 'no such file', duration_ms: 1, started_at: 7 },
    { job_id: 'J2', call_id: 'c3', tool: 'complete', args: {}, status: 'finished', result: 'ok', duration_ms: 1, started_at: 8 },
  ];
  const items = feed.buildFeed([job('succeeded'), job('succeeded', 'J2')], [], {}, ledger);
  const c = cards(items);
  assert.deepEqual(c.map((x) => [x.name, x.result, x.isError ?? false]), [
    ['RequestTool', 'Approved', false], ['WriteFile', 'wrote', false], ['ReadFile', 'no such file', true],
  ]);
  assert.equal(c[0].durationMs, 900);
  assert.equal(c[0].parkNote, 'created');
  // Each job's cards follow its own divider.
  const kinds = items.map((i) => (i.kind === 'tool' ? i.card.name : i.kind));
  assert.deepEqual(kinds, ['job', 'RequestTool', 'WriteFile', 'job', 'ReadFile']);
});

test('the ledger completes delta cards instead of adding to them; a waiting entry marks the park', () => {
  const ds = [d({ type: 'movement', movement: 'chat' }), ...call('c1', 'RequestTool', ARGS), result('c1', 'RequestTool', 'created')];
  const ledger = [{ job_id: 'J1', call_id: 'c1', tool: 'RequestTool', args: ARGS, status: 'waiting', result: 'created', duration_ms: 0, started_at: 1 }];
  const c = cards(feed.buildFeed([job('running')], [], { J1: ds }, ledger));
  assert.equal(c.length, 1);
  assert.equal(c[0].waiting, true);
});

test('ledger calls older than the first buffered delta are shown before the stream', () => {
  const ds = [d({ type: 'movement', movement: 'chat' }), ...call('c5', 'ReadFile', { path: 'b' }), result('c5', 'ReadFile', 'B')];
  const ledger = [
    { job_id: 'J1', call_id: 'c4', tool: 'ReadFile', args: { path: 'a' }, status: 'finished', result: 'A', duration_ms: 1, started_at: 10 },
    { job_id: 'J1', call_id: 'c5', tool: 'ReadFile', args: { path: 'b' }, status: 'finished', result: 'B'.repeat(3000), duration_ms: 1, started_at: 5000 },
  ];
  const c = cards(feed.buildFeed([job('succeeded')], [], { J1: ds }, ledger));
  assert.deepEqual(c.map((x) => x.args), ['{"path":"a"}', '{"path":"b"}']);
  assert.equal(c[1].result.length, 3000, "the ledger's longer result replaces the deltas' cut one");
});

test('an Auto Prompter policy delta is a notice line: deny warns, instruct and approve_once inform', () => {
  const ds = [d({ type: 'movement', movement: 'chat' }),
    ...call('c1', 'RunCommand', { command: 'rm -rf /' }),
    d({ type: 'policy', rule: 'no-rm', tool: 'RunCommand', movement: 'chat', decision: 'deny', args_hash: 'h1' }),
    result('c1', 'RunCommand', 'Error: denied by policy'),
    ...call('c2', 'WriteFile', { path: 'a', content: 'x' }),
    d({ type: 'policy', rule: 'tests-after-write', tool: 'WriteFile', movement: 'chat', decision: 'instruct', args_hash: 'h2' }),
    result('c2', 'WriteFile', 'wrote 1 bytes'),
    d({ type: 'policy', rule: 'ok-ls', tool: 'RunCommand', movement: 'chat', decision: 'approve_once', args_hash: 'h3' })];
  const items = feed.buildFeed([job('succeeded')], [], { J1: ds });
  const notices = items.filter((i) => i.kind === 'notice').map((i) => [i.tone, i.text]);
  assert.deepEqual(notices, [
    ['warn', 'Policy rule no-rm denied RunCommand'],
    ['info', 'Policy rule tests-after-write added an instruction after WriteFile'],
    ['info', 'Policy rule ok-ls approved this RunCommand call once'],
  ]);
  // In stream order, between the cards; no raw arguments in the lines.
  const kinds = items.map((i) => (i.kind === 'tool' ? i.card.name : i.kind));
  assert.deepEqual(kinds, ['job', 'movement', 'RunCommand', 'notice', 'WriteFile', 'notice', 'notice']);
  assert.ok(notices.every(([, t]) => !t.includes('rm -rf')));
  assert.equal(feed.describeEvent({ id: 'e', type: 'policy.fired', task_id: 'T', job_id: 'J1', created_at: 1,
    payload: { rule: 'no-rm', tool: 'RunCommand', decision: 'deny', args_hash: 'h1' } }), 'Policy rule no-rm denied RunCommand');
});
