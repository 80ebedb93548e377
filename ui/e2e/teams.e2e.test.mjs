// Issue 49 "Teams" end to end: Debian's Chromium signs users in through a
// real OpenID Connect provider (tests/oidc/provider.mjs, npm oidc-provider)
// into a real `maestro serve` + `maestro-fakellm` (e2e-script.yaml's
// "e2e-tool" task parks on a tool approval). One browser context per user:
//   alice (group eng-platform → operator of team platform) signs in on the
//     provider's login page, sees herself in platform, creates a shared task
//     in the team space platform-repo; it parks on the tool request; her
//     session's POST without X-CSRF-Token is refused (403);
//   carol (platform-viewers → viewer) sees the task and the request but no
//     Approve button, and the decide route from her session, with her CSRF
//     header, answers 403;
//   bob (platform-approvers → approver) clicks Approve, the task goes on and
//     finishes;
//   dave (other-team; viewer outside team spaces) gets 404 for the task,
//     from the page and from the API;
//   the admin (admin token) opens the audit page: alice's task.create and
//     bob's request.decide with times, and the JSON-lines export with both.
// Screenshots under build/ui-e2e-artifacts/teams-NN-*.png.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, launchBrowser, screenshot, startOidcProvider, startStack, TOKEN, UI_DIR } from './harness.mjs';

let stack;
let idp;
let browser;
const pages = {}; // user -> page (own browser context each)
let taskId = '';

before(async () => {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  idp = await startOidcProvider({ name: 'teams', redirectUri: `${base}/auth/callback`, postLogoutRedirectUri: `${base}/` });
  stack = await startStack({
    script: join(UI_DIR, 'e2e', 'e2e-script.yaml'),
    name: 'teams',
    port,
    config: (dataDir) =>
      'auth:\n' +
      '  default_role: viewer\n' +
      '  oidc:\n' +
      `    issuer: ${idp.issuer}\n` +
      `    client_id: ${idp.clientId}\n` +
      `    client_secret: ${idp.clientSecret}\n` +
      `    redirect_uri: ${base}/auth/callback\n` +
      '    scopes: [openid, profile, email, groups]\n' +
      'teams:\n' +
      '  platform:\n' +
      '    groups: {eng-platform: operator, platform-approvers: approver, platform-viewers: viewer}\n' +
      'spaces:\n' +
      '  platform-repo:\n' +
      `    path: ${join(dataDir, 'platform-repo')}\n` +
      '    team: platform\n' +
      '    edit_allowed: true\n' +
      '    description: The platform team repository\n',
  });
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  const code = await stack?.stop();
  await idp?.stop();
  assert.equal(code, 0, 'maestro serve exits cleanly on SIGTERM');
});

async function newPage(user) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, acceptDownloads: true });
  const page = await context.newPage();
  page.setDefaultTimeout(20000);
  pages[user] = page;
  return page;
}

// Signs `user` in through the UI's SSO button and the provider's login page;
// `path`: where the UI starts (the return_to).
async function ssoSignIn(user, path = '/') {
  const page = await newPage(user);
  await page.goto(`${stack.base}${path}`);
  await page.getByTestId('sso-login').click();
  await page.waitForURL((u) => u.origin === idp.issuer);
  await page.locator('input[name="login"]').fill(user);
  await page.locator('input[name="password"]').fill(user);
  await page.locator('#login-submit').click();
  await page.waitForURL((u) => u.origin === stack.base && !u.pathname.startsWith('/auth/'));
  await page.getByTestId('whoami').getByText(user, { exact: true }).waitFor();
  return page;
}

// A fetch from the page's own session (cookies), optionally with the CSRF header.
function fromPage(page, path, { method = 'GET', body, csrf = true } = {}) {
  return page.evaluate(
    async ({ path, method, body, csrf }) => {
      const headers = { 'Content-Type': 'application/json' };
      const m = document.cookie.match(/(?:^|;\s*)maestro_csrf=([^;]*)/);
      if (csrf && m) headers['X-CSRF-Token'] = decodeURIComponent(m[1]);
      const r = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin' });
      const text = await r.text();
      let json = null;
      try {
        json = JSON.parse(text);
      } catch {
        /* not JSON */
      }
      return { status: r.status, body: json };
    },
    { path, method, body, csrf },
  );
}

test('the Login screen offers SSO; alice signs in through the provider and sees her team', async () => {
  const alice = await ssoSignIn('alice');
  const who = alice.getByTestId('whoami');
  await who.locator('[data-part="team"][data-team="platform"][data-role="operator"]').waitFor();
  assert.equal(await alice.evaluate(() => localStorage.getItem('maestro.token')), null, 'a session, no token kept');
  const me = await fromPage(alice, '/api/me');
  assert.equal(me.status, 200);
  assert.equal(me.body.user, 'alice');
  assert.equal(me.body.via, 'session');
  assert.deepEqual(me.body.teams, [{ team: 'platform', role: 'operator' }]);
  await alice.getByRole('button', { name: 'New task' }).waitFor();
  assert.equal(await alice.getByTestId('nav-audit').count(), 0, 'no Audit link without can.admin');
  await screenshot(alice, 'alice-signed-in');
});

test('alice creates a shared task in the team space; it parks on a tool approval', async () => {
  const alice = pages.alice;
  await alice.getByRole('button', { name: 'New task' }).click();
  const dialog = alice.getByRole('dialog', { name: 'New task' });
  await dialog.getByLabel('Instruction', { exact: true }).fill('e2e-tool: write the platform note');
  const space = dialog.getByLabel('Space', { exact: true });
  await space.locator('option[value="platform-repo"]').waitFor({ state: 'attached' });
  assert.match(await space.locator('option[value="platform-repo"]').innerText(), /team platform/, 'the team beside the space');
  // alice is a viewer outside team spaces: no ephemeral workspace for her, the team space preselected.
  assert.equal(await space.locator('option[value=""]').evaluate((o) => o.disabled), true, 'the ephemeral workspace is disabled');
  assert.equal(await space.inputValue(), 'platform-repo');
  await space.selectOption('platform-repo');
  await dialog.getByLabel('Visibility').selectOption('shared');
  await dialog.getByRole('button', { name: 'Create task' }).click();
  await alice.waitForURL(/\/tasks\//);
  taskId = decodeURIComponent(alice.url().match(/\/tasks\/([^/?#]+)/)[1]);
  const card = alice.getByTestId('tool-request');
  await card.waitFor();
  await card.getByRole('button', { name: 'Approve once' }).waitFor(); // an operator may decide
  assert.match(await alice.getByTestId('chat-meta').innerText(), /team platform/);
  await screenshot(alice, 'alice-task-parked');

  const shown = await fromPage(alice, `/api/local/tasks/${taskId}`);
  assert.equal(shown.body.task.team, 'platform');
  assert.deepEqual(shown.body.task.can, { run: true, decide: true });
  // CSRF: the same session's POST without the header is refused, nothing written.
  const noCsrf = await fromPage(alice, `/api/local/tasks/${taskId}/comments`, { method: 'POST', body: { body: 'no csrf' }, csrf: false });
  assert.equal(noCsrf.status, 403, JSON.stringify(noCsrf.body));
  assert.match(noCsrf.body.error.message, /X-CSRF-Token/);
  const comments = await fromPage(alice, `/api/local/tasks/${taskId}/comments`);
  assert.ok(!comments.body.comments.some((c) => c.body === 'no csrf'), 'the refused comment was not stored');
});

test('carol (viewer) sees the task and the request but cannot approve: no button, 403 from the API', async () => {
  const carol = await ssoSignIn('carol', `/tasks/${taskId}`);
  await carol.getByTestId('whoami').locator('[data-team="platform"][data-role="viewer"]').waitFor();
  const card = carol.getByTestId('tool-request');
  await card.waitFor();
  await card.getByTestId('cannot-decide').waitFor();
  assert.equal(await carol.getByRole('button', { name: /Approve/ }).count(), 0, 'no Approve button for a viewer');
  assert.equal(await carol.getByRole('button', { name: 'Deny' }).count(), 0, 'no Deny button for a viewer');
  assert.equal(await carol.getByRole('button', { name: 'New task' }).count(), 0, 'no New task for a viewer everywhere');
  assert.equal(await carol.getByLabel('Message').count(), 0, 'no composer without run');
  await carol.getByTestId('read-only-note').waitFor();
  await screenshot(carol, 'carol-no-approve');

  const shown = await fromPage(carol, `/api/local/tasks/${taskId}`);
  assert.equal(shown.status, 200);
  assert.deepEqual(shown.body.task.can, { run: false, decide: false });
  const req = shown.body.pending_requests.find((r) => r.status === 'pending');
  assert.ok(req, 'the pending request is visible to the viewer');
  const decided = await fromPage(carol, `/api/local/tasks/${taskId}/${req.kind}-requests/${req.id}/decide`, {
    method: 'POST',
    body: { decision: 'approve', scope: 'once' },
  });
  assert.equal(decided.status, 403, JSON.stringify(decided.body));
  assert.equal(decided.body.error.code, 'PERMISSION_DENIED');
  const again = await fromPage(carol, `/api/local/tasks/${taskId}`);
  assert.equal(again.body.pending_requests.find((r) => r.id === req.id)?.status, 'pending', 'still pending after the refusal');
});

test('bob (approver) approves; the task goes on and finishes', async () => {
  const bob = await ssoSignIn('bob', `/tasks/${taskId}`);
  await bob.getByTestId('whoami').locator('[data-team="platform"][data-role="approver"]').waitFor();
  const card = bob.getByTestId('tool-request');
  await card.waitFor();
  assert.equal(await bob.getByLabel('Message').count(), 0, 'an approver has no composer (no run)');
  await screenshot(bob, 'bob-approve');
  await card.getByRole('button', { name: 'Approve once' }).click();
  const feed = bob.getByTestId('feed');
  await feed.getByText('APPROVAL-SEEN', { exact: false }).waitFor();
  await feed.getByText('RESULT-WROTE notes.txt saved').waitFor();
  await screenshot(bob, 'bob-approved');
  // alice's page follows it live.
  await pages.alice.getByTestId('feed').getByText('RESULT-WROTE notes.txt saved').waitFor();
});

test('dave (another team) gets 404 for the task, on the page and from the API', async () => {
  const dave = await ssoSignIn('dave', `/tasks/${taskId}`);
  await dave.getByTestId('not-found').waitFor();
  const shown = await fromPage(dave, `/api/local/tasks/${taskId}`);
  assert.equal(shown.status, 404);
  assert.doesNotMatch(JSON.stringify(shown.body), /platform note/, 'nothing of the task in the 404');
  const list = await fromPage(dave, '/api/local/tasks');
  assert.ok(!list.body.tasks.some((t) => t.id === taskId), 'not listed for another team');
  const spaces = await fromPage(dave, '/api/spaces');
  assert.ok(!(spaces.body.spaces ?? []).some((s) => s.name === 'platform-repo'), 'the team space is not listed for dave');
  await screenshot(dave, 'dave-not-found');
});

test('the admin sees alice and bob in the audit log, and the JSON-lines export has both', async () => {
  const admin = await newPage('admin');
  await admin.goto(stack.base);
  await admin.getByLabel('API token').fill(TOKEN);
  await admin.getByRole('button', { name: 'Sign in', exact: true }).click();
  await admin.getByTestId('nav-audit').click();
  await admin.waitForURL(/\/audit$/);
  const create = admin.locator(`[data-testid="audit-row"][data-actor="alice"][data-action="task.create"][data-task="${taskId}"]`);
  const decide = admin.locator(`[data-testid="audit-row"][data-actor="bob"][data-action="request.decide"][data-task="${taskId}"]`);
  await create.waitFor();
  await decide.waitFor();
  for (const row of [create, decide]) {
    const at = await row.locator('[data-part="at"]').getAttribute('title');
    assert.ok(Math.abs(Date.parse(at) - Date.now()) < 10 * 60 * 1000, `a recent time (${at})`);
    assert.equal(await row.locator('[data-part="team"]').innerText(), 'platform');
  }
  assert.match(await decide.locator('[data-part="detail"]').innerText(), /approve/);
  await screenshot(admin, 'audit-page');

  // Filtered by actor: only bob's entries.
  await admin.getByLabel('Actor').fill('bob');
  await admin.getByRole('button', { name: 'Filter' }).click();
  await admin.locator('[data-testid="audit-row"][data-actor="alice"]').first().waitFor({ state: 'detached' });
  await decide.waitFor();
  await admin.getByLabel('Actor').fill('');
  await admin.getByRole('button', { name: 'Filter' }).click();
  await create.waitFor();

  const [download] = await Promise.all([admin.waitForEvent('download'), admin.getByTestId('audit-export').click()]);
  const text = readFileSync(await download.path(), 'utf8');
  const lines = text.split('\n').filter(Boolean).map((l) => JSON.parse(l));
  assert.ok(lines.some((e) => e.actor === 'alice' && e.action === 'task.create' && e.task_id === taskId && e.at > 0), 'alice in the export');
  const bobs = lines.find((e) => e.actor === 'bob' && e.action === 'request.decide' && e.task_id === taskId);
  assert.ok(bobs && bobs.at > 0, 'bob in the export');
  assert.match(JSON.stringify(bobs.detail), /args_sha256/, 'the decision carries the arguments hash');
  assert.ok(lines.findIndex((e) => e === bobs) > lines.findIndex((e) => e.actor === 'alice' && e.action === 'task.create'), 'oldest first');
});

test('alice makes a read+run token on the Tokens page: shown once, works as scoped, dave cannot see or revoke it, Revoke ends it', async () => {
  const alice = pages.alice;
  await alice.getByRole('button', { name: 'Tokens' }).click();
  await alice.waitForURL(/\/tokens$/);
  const form = alice.locator('form.token-form');
  await form.getByLabel('Name').fill('ci-e2e');
  await form.getByRole('checkbox', { name: /^run/ }).check();
  await form.getByLabel('Expires after').selectOption({ label: '1 day' });
  await form.getByRole('button', { name: 'Create token' }).click();
  const plain = await alice.getByTestId('new-token-value').inputValue();
  assert.ok(plain.length >= 20, 'the plain token is shown');
  const row = alice.locator('[data-testid="token-row"]', { hasText: 'ci-e2e' });
  await row.waitFor();
  assert.equal(await row.locator('[data-part="state"]').innerText(), 'active');
  assert.doesNotMatch(await alice.getByTestId('tokens-table').innerText(), new RegExp(plain), 'the table never shows the token');
  await screenshot(alice, 'alice-token-created');
  const tokenId = await row.getAttribute('data-token-id');

  const bearer = (path, init = {}) =>
    fetch(`${stack.base}${path}`, { ...init, headers: { Authorization: `Bearer ${plain}`, 'Content-Type': 'application/json' } });
  const me = await (await bearer('/api/me')).json();
  assert.equal(me.user, 'alice');
  assert.deepEqual([...me.scopes].sort(), ['read', 'run']);
  const wider = await bearer('/api/local/tokens', { method: 'POST', body: JSON.stringify({ name: 'x', scopes: ['decide'] }) });
  assert.equal(wider.status, 403, 'a read+run token cannot mint a decide token');

  const dave = pages.dave;
  const daveList = await fromPage(dave, '/api/local/tokens');
  assert.ok(!daveList.body.tokens.some((t) => t.id === tokenId), "alice's token is not listed for dave");
  const daveRevoke = await fromPage(dave, `/api/local/tokens/${tokenId}`, { method: 'DELETE' });
  assert.equal(daveRevoke.status, 404);
  assert.equal((await bearer('/api/me')).status, 200, 'still valid after dave tried');

  alice.once('dialog', (d) => d.accept());
  await row.getByRole('button', { name: 'Revoke ci-e2e' }).click();
  await row.locator('[data-part="state"]', { hasText: 'revoked' }).waitFor();
  assert.equal((await bearer('/api/me')).status, 401, 'revoked: refused at once');
});

test("sign out ends alice's session: /api/me is 401 for her browser afterwards", async () => {
  const alice = pages.alice;
  const before = await alice.context().request.get(`${stack.base}/api/me`);
  assert.equal(before.status(), 200);
  await alice.getByTestId('sign-out').click();
  // Then the Login screen, or the provider's own logout page (logout_url).
  const end = Date.now() + 15000;
  for (;;) {
    const url = new URL(alice.url());
    if (url.origin === idp.issuer) break;
    if (url.origin === stack.base && (await alice.getByTestId('sso-login').count().catch(() => 0)) > 0) break;
    assert.ok(Date.now() < end, `neither the Login screen nor the provider's logout page (at ${alice.url()})`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const after = await alice.context().request.get(`${stack.base}/api/me`);
  assert.equal(after.status(), 401);
});
