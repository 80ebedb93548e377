// Unit tests of src/api.ts's credentials (issue 49; bundled with esbuild like
// feed.test.mjs, with `document.cookie` and `localStorage` stubbed): the
// bearer token when one is kept, none otherwise (the session cookie speaks);
// X-CSRF-Token from exactly the maestro_csrf cookie on every method but
// GET/HEAD; the audit filters' query string; and what api() sends.
import { before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

let api;
const store = new Map();
globalThis.localStorage = {
  getItem: (k) => (store.has(k) ? store.get(k) : null),
  setItem: (k, v) => store.set(k, String(v)),
  removeItem: (k) => store.delete(k),
};
globalThis.document = { cookie: '' };

before(async () => {
  const out = join(mkdtempSync(join(tmpdir(), 'maestro-api-')), 'api.mjs');
  const src = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'src', 'api.ts');
  await build({ entryPoints: [src], bundle: true, format: 'esm', platform: 'node', outfile: out, logLevel: 'error' });
  api = await import(pathToFileURL(out).href);
});

beforeEach(() => {
  store.clear();
  document.cookie = '';
});

test('session mode: no Authorization; the CSRF header on writes only', () => {
  document.cookie = 'other=1; maestro_csrf=abc%2Bdef; theme=dark';
  assert.equal(api.csrfToken(), 'abc+def');
  const get = api.authHeaders('GET');
  assert.equal(get.get('Authorization'), null);
  assert.equal(get.get('X-CSRF-Token'), null, 'a GET carries no CSRF header');
  assert.equal(api.authHeaders('HEAD').get('X-CSRF-Token'), null);
  for (const m of ['POST', 'PATCH', 'DELETE', 'put', 'post']) assert.equal(api.authHeaders(m).get('X-CSRF-Token'), 'abc+def', m);
});

test('only the maestro_csrf cookie itself counts, not names that contain it', () => {
  document.cookie = 'xmaestro_csrf=evil; maestro_csrf_old=stale';
  assert.equal(api.csrfToken(), '');
  assert.equal(api.authHeaders('POST').get('X-CSRF-Token'), null, 'no cookie, no header');
  document.cookie = 'xmaestro_csrf=evil; maestro_csrf=good';
  assert.equal(api.csrfToken(), 'good');
});

test('token mode: the bearer token; signing out forgets it', () => {
  api.setToken('tok-1');
  assert.equal(api.authHeaders('GET').get('Authorization'), 'Bearer tok-1');
  api.setToken('');
  assert.equal(api.getToken(), '');
  assert.equal(api.authHeaders('GET').get('Authorization'), null);
});

test('api() sends same-origin credentials and the CSRF header of a session write', async () => {
  document.cookie = 'maestro_csrf=c1';
  const seen = [];
  globalThis.fetch = async (path, init) => {
    seen.push({ path, init });
    return new Response(JSON.stringify({ ok: true }), { status: 200 });
  };
  await api.Api.me();
  await api.Api.revokeToken('01ABC/../x');
  await api.Api.createToken({ name: 'ci', scopes: ['read'], expires_in_s: 86400 });
  assert.equal(seen[0].path, '/api/me');
  assert.equal(seen[0].init.credentials, 'same-origin');
  assert.equal(seen[0].init.headers.get('X-CSRF-Token'), null);
  assert.equal(seen[1].path, '/api/local/tokens/01ABC%2F..%2Fx', 'the id is one path segment');
  assert.equal(seen[1].init.method, 'DELETE');
  assert.equal(seen[1].init.headers.get('X-CSRF-Token'), 'c1');
  assert.equal(seen[2].init.headers.get('X-CSRF-Token'), 'c1');
  assert.deepEqual(JSON.parse(seen[2].init.body), { name: 'ci', scopes: ['read'], expires_in_s: 86400 });
});

test('a 401 calls the unauthorized handler (the Login screen)', async () => {
  let called = 0;
  api.setUnauthorizedHandler(() => called++);
  globalThis.fetch = async () => new Response(JSON.stringify({ error: { code: 'UNAUTHENTICATED', message: 'no' } }), { status: 401 });
  await assert.rejects(api.Api.me(), (e) => e.status === 401 && e.code === 'UNAUTHENTICATED');
  assert.equal(called, 1);
});

test('the audit query leaves empty filters out and encodes the rest', () => {
  assert.equal(api.auditQuery({}), '');
  assert.equal(api.auditQuery({ actor: '', action: 'request.decide' }), '?action=request.decide');
  assert.equal(api.auditQuery({ actor: 'a b&c', task_id: ' T1 ' }, { before_id: '42' }), '?actor=a+b%26c&task_id=T1&before_id=42');
});
