// Issue 45 item 12 (seed 000 §1: the UI offers what the API offers), end to
// end: the New task dialog's model profile and visibility reach the task, and
// "Continue with another piece" starts a job of the chosen piece whose note
// reaches the model. Debian's Chromium against a real `maestro serve`: the
// default profile on the harness's fake (e2e-script.yaml), a `fast` profile
// on a second `maestro-fakellm` this file starts, whose recorded requests
// (GET /v1/_requests) show what maestro sent for the `fast` tasks. A stale
// list (a profile or piece the page still offers but the server no longer
// has, injected with page.route) draws the server's real 400, shown in the
// form with the named control marked. A second user sees the shared task,
// not the private ones.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { apiCall, FAKELLM_BIN, launchBrowser, screenshot, startStack, stopChild, TOKEN, UI_DIR } from './harness.mjs';

const FAST_MODEL = 'e2e-fast-model';
const NOTE = 'NOTE-E2E-CONT now check the plan for risks';
// The `fast` profile's fake: the continued job (its messages hold the note)
// and every other task of this file complete at once.
const FAST_SCRIPT = `replies:
  - match: {any_message_contains: "NOTE-E2E-CONT"}
    repeat: 0
    tool_calls: [{name: complete, arguments: {status: success, result: "RESULT-CONTINUED reviewed the plan"}}]
  - match: {any_message_contains: "e2e-choices"}
    repeat: 0
    tool_calls: [{name: complete, arguments: {status: success, result: "RESULT-CHOICES done"}}]
default:
  tool_calls: [{name: complete, arguments: {status: success, result: "RESULT-FAST-DEFAULT"}}]
`;

let stack;
let browser;
let page;
let fast; // { child, base, dir }
let bob; // a second user's token

// Starts maestro-fakellm on a free loopback port; resolves with its base URL.
function startFastFake() {
  const dir = mkdtempSync(join(tmpdir(), 'maestro-e2e-fast-'));
  const script = join(dir, 'fast.yaml');
  writeFileSync(script, FAST_SCRIPT);
  const child = spawn(FAKELLM_BIN(), ['--host', '127.0.0.1', '--port', '0', '--script', script, '--model', FAST_MODEL], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((res, rej) => {
    let buf = '';
    const t = setTimeout(() => rej(new Error('the fast fake printed no listening line')), 15000);
    child.stdout.on('data', (d) => {
      buf += d.toString();
      const m = buf.match(/^listening (\S+)$/m);
      if (m) {
        clearTimeout(t);
        res({ child, base: `http://${m[1]}`, dir });
      }
    });
    child.once('exit', (code) => rej(new Error(`the fast fake exited with ${code}`)));
  });
}

// What maestro sent the `fast` profile's server, oldest first.
async function fastRequests() {
  const r = await fetch(`${fast.base}/v1/_requests`);
  return (await r.json()).requests.filter((q) => q.body);
}

async function waitJobs(taskId, pred, what, ms = 20000) {
  const end = Date.now() + ms;
  let last;
  while (Date.now() < end) {
    last = (await apiCall(stack, `/api/local/tasks/${taskId}`)).body;
    if (pred(last.jobs ?? [])) return last;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.fail(`${what}; last: ${JSON.stringify(last?.jobs)}`);
}

const taskCount = async () => (await apiCall(stack, '/api/local/tasks')).body.tasks.length;
const asBob = (path, init = {}) => apiCall(stack, path, { ...init, headers: { Authorization: `Bearer ${bob}` } });
const focusedName = () => page.evaluate(() => document.activeElement?.getAttribute('name') ?? document.activeElement?.tagName);

before(async () => {
  fast = await startFastFake();
  stack = await startStack({
    script: join(UI_DIR, 'e2e', 'e2e-script.yaml'),
    name: 'choices',
    config: () => `llm_profiles:\n  fast:\n    base_url: ${fast.base}/v1\n    model: ${FAST_MODEL}\n    max_attempts: 1\n`,
  });
  const token = await apiCall(stack, '/api/local/tokens', { method: 'POST', body: JSON.stringify({ user: 'bob' }) });
  assert.equal(token.status, 201, JSON.stringify(token.body));
  bob = token.body.token;
  browser = await launchBrowser();
  page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
  page.setDefaultTimeout(20000);
  await page.goto(stack.base);
  await page.getByLabel('API token').fill(TOKEN);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'New task' }).waitFor();
});

after(async () => {
  await browser?.close();
  const code = await stack?.stop();
  await stopChild(fast?.child);
  if (fast) rmSync(fast.dir, { recursive: true, force: true });
  assert.equal(code, 0, 'maestro serve exits cleanly on SIGTERM');
});

test('New task: the profile and visibility chosen reach the task; a refused profile is shown in the form', async () => {
  // The page's list goes stale: it still offers `retired`, which the server no longer has.
  await page.route('**/api/profiles', async (route) => {
    const res = await route.fetch();
    const body = await res.json();
    body.profiles.push({ name: 'retired', model: 'old-model' });
    await route.fulfill({ response: res, json: body });
  });
  await page.getByRole('button', { name: 'New task' }).click();
  const dialog = page.getByRole('dialog', { name: 'New task' });
  const profile = dialog.getByLabel('Model profile');
  const visibility = dialog.getByLabel('Visibility');
  await profile.locator('option[value="fast"]').waitFor({ state: 'attached' });
  const offered = await profile.locator('option').evaluateAll((os) => os.map((o) => [o.value, o.textContent]));
  assert.deepEqual(offered.slice(1), [['fast', `fast · ${FAST_MODEL}`], ['retired', 'retired · old-model']]);
  assert.equal(offered[0][0], '', 'the default profile first, sent as no profile');
  assert.match(offered[0][1], /^default/);
  assert.equal(await profile.inputValue(), '');
  assert.deepEqual(await visibility.locator('option').evaluateAll((os) => os.map((o) => o.value)), ['private', 'shared']);
  assert.equal(await visibility.inputValue(), 'private', 'private unless chosen');
  const options = await (await apiCall(stack, '/api/profiles')).body;
  assert.doesNotMatch(JSON.stringify(options), /127\.0\.0\.1/, 'the route shows no profile URL');

  await dialog.getByLabel('Instruction', { exact: true }).fill('e2e-choices-create greet the team');
  await profile.selectOption('retired');
  await visibility.selectOption('shared');
  await dialog.getByRole('button', { name: 'Create task' }).click();
  const alert = dialog.getByRole('alert');
  await alert.getByText("profile: unknown profile 'retired'; configured profiles: default, fast").waitFor();
  assert.equal(await alert.getAttribute('data-field'), 'profile');
  assert.equal(await profile.getAttribute('aria-invalid'), 'true');
  assert.equal(await profile.getAttribute('aria-describedby'), await alert.getAttribute('id'));
  assert.equal(await focusedName(), 'profile', 'the refused control has the focus');
  assert.equal(await dialog.getByLabel('Instruction', { exact: true }).inputValue(), 'e2e-choices-create greet the team');
  assert.equal(await taskCount(), 0, 'the refused create wrote no task');
  await screenshot(page, 'profile-refused');

  await profile.selectOption('fast');
  await dialog.getByRole('button', { name: 'Create task' }).click();
  await page.waitForURL(/\/tasks\//);
  const id = decodeURIComponent(page.url().split('/tasks/')[1]);
  const shown = (await apiCall(stack, `/api/local/tasks/${id}`)).body;
  assert.equal(shown.task.visibility, 'shared');
  assert.equal(shown.jobs[0].profile, 'fast');
  assert.equal(shown.jobs[0].model, FAST_MODEL);
  await page.locator('.chat-header .badge[data-status="succeeded"]').waitFor();
  assert.match(await page.getByTestId('chat-meta').innerText(), /^chat · shared · profile fast · /, 'the header says what was chosen');
  const sent = (await fastRequests()).filter((q) => JSON.stringify(q.body.messages).includes('e2e-choices-create'));
  assert.ok(sent.length >= 1, 'the fast profile\'s server answered the task');
  assert.equal(sent[0].body.model, FAST_MODEL);
  assert.equal((await asBob(`/api/local/tasks/${id}`)).status, 200, 'a shared task is seen by another user');
  await screenshot(page, 'created-fast-shared');
  await page.unroute('**/api/profiles');

  // Nothing chosen: the default profile (no `profile` sent) and private.
  await page.getByRole('button', { name: 'New task' }).click();
  await dialog.getByLabel('Instruction', { exact: true }).fill('e2e-plain private by default');
  const request = page.waitForRequest((r) => r.method() === 'POST' && r.url().endsWith('/api/local/tasks'));
  await dialog.getByRole('button', { name: 'Create task' }).click();
  const sentBody = JSON.parse((await request).postData());
  assert.equal('profile' in sentBody, false, 'the default profile is sent as no profile');
  assert.equal(sentBody.visibility, 'private');
  await page.waitForURL((u) => u.pathname.startsWith('/tasks/') && !u.pathname.endsWith(encodeURIComponent(id)));
  const plainId = decodeURIComponent(page.url().split('/tasks/')[1]);
  const plain = (await apiCall(stack, `/api/local/tasks/${plainId}`)).body;
  assert.equal(plain.task.visibility, 'private');
  assert.ok(['', 'default'].includes(plain.jobs[0].profile), `the default profile, got ${plain.jobs[0].profile}`);
  await page.getByTestId('chat-meta').getByText(/model call/).waitFor();
  assert.doesNotMatch(await page.getByTestId('chat-meta').innerText(), /shared|profile/, 'nothing to say for the defaults');
  assert.equal(plain.jobs[0].model, '', 'not the fast model');
  assert.equal((await asBob(`/api/local/tasks/${plainId}`)).status, 404, 'a private task is another user\'s 404');
  assert.ok(!(await fastRequests()).some((q) => JSON.stringify(q.body.messages).includes('e2e-plain')), 'not sent to the fast profile');
});

test('Continue with another piece: a note and a piece, Escape closes, a refused piece is shown; the new job runs it', async () => {
  const created = await apiCall(stack, '/api/local/tasks', {
    method: 'POST',
    body: JSON.stringify({ instruction: 'e2e-choices-continue summarise the plan', piece: 'chat', profile: 'fast' }),
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const id = created.body.task.id;
  await waitJobs(id, (jobs) => jobs[0]?.status === 'succeeded', 'the first job succeeds');
  await page.goto(`${stack.base}/tasks/${encodeURIComponent(id)}`);
  await page.locator('.chat-header .badge[data-status="succeeded"]').waitFor();

  // Keyboard: the dialog opens from its button, the piece select has the
  // focus, Escape closes it and leaves the focus on the page (`n` still works).
  const open = page.getByRole('button', { name: 'Continue with another piece' });
  await open.focus();
  await page.keyboard.press('Enter');
  const dialog = page.getByRole('dialog', { name: 'Continue with another piece' });
  const piece = dialog.getByLabel('Piece');
  await piece.waitFor();
  assert.equal(await piece.inputValue(), 'chat', 'the task\'s piece preselected');
  assert.equal(await focusedName(), 'piece');
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'detached' });
  assert.equal(await page.evaluate(() => document.activeElement === document.body), true);
  await page.keyboard.press('n');
  await page.getByRole('dialog', { name: 'New task' }).waitFor();
  await page.keyboard.press('Escape');
  await page.getByRole('dialog', { name: 'New task' }).waitFor({ state: 'detached' });

  // A stale piece list: the server refuses `retired-piece` naming the field.
  await page.route('**/api/pieces', async (route) => {
    const res = await route.fetch();
    const body = await res.json();
    body.pieces.push({ name: 'retired-piece', description: 'gone from the server' });
    await route.fulfill({ response: res, json: body });
  });
  await open.click();
  await piece.locator('option[value="retired-piece"]').waitFor({ state: 'attached' });
  const names = await piece.locator('option').evaluateAll((os) => os.map((o) => o.value));
  for (const n of ['chat', 'coding', 'research', 'review']) assert.ok(names.includes(n), `offers ${n}`);
  await piece.selectOption('retired-piece');
  await dialog.getByLabel('Note for the agent (optional)').fill(NOTE);
  await dialog.getByRole('button', { name: 'Continue with this piece' }).click();
  const alert = dialog.getByRole('alert');
  await alert.getByText("piece: unknown piece 'retired-piece'").waitFor();
  assert.equal(await piece.getAttribute('aria-invalid'), 'true');
  assert.equal(await focusedName(), 'piece');
  assert.equal((await apiCall(stack, `/api/local/tasks/${id}`)).body.jobs.length, 1, 'the refused continue wrote no job');
  await screenshot(page, 'continue-piece-refused');
  await page.unroute('**/api/pieces');

  // Another user cannot continue this private task.
  assert.equal((await asBob(`/api/local/tasks/${id}/continue`, { method: 'POST', body: JSON.stringify({ piece: 'review' }) })).status, 404);

  // review + the note, sent with Ctrl+Enter from the note.
  await piece.selectOption('review');
  assert.equal(await dialog.getByLabel('Note for the agent (optional)').inputValue(), NOTE, 'the note is kept');
  await dialog.getByLabel('Note for the agent (optional)').press('Control+Enter');
  await dialog.waitFor({ state: 'detached' });
  await page.locator('.toast').getByText('Continuing with review in a new job').waitFor();
  const divider = page.getByTestId('job-divider').filter({ hasText: 'Job 2' });
  await divider.getByText('review', { exact: false }).waitFor();
  const done = await waitJobs(id, (jobs) => jobs.length === 2 && jobs[1].status === 'succeeded', 'the continued job succeeds');
  const [first, second] = done.jobs;
  assert.equal(second.piece, 'review');
  assert.equal(second.continued_from_job_id, first.id);
  assert.equal(second.profile, 'fast', 'a continuation keeps the task\'s profile');
  await page.getByTestId('feed').getByText('RESULT-CONTINUED reviewed the plan').first().waitFor();
  await screenshot(page, 'continued-review');

  // What the model got: the note, in a request of the review piece.
  const withNote = (await fastRequests()).filter((q) => JSON.stringify(q.body.messages).includes(NOTE));
  assert.ok(withNote.length >= 1, 'the note reached the model');
  assert.match(JSON.stringify(withNote[0].body.messages), /Review what the user points at/, 'the continued job runs the review piece');
  assert.equal(withNote[0].body.model, FAST_MODEL);
});
