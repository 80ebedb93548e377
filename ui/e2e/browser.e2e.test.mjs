// BrowseWeb's login hand-over end to end: a `research` task opens a page of
// a local site (node:http on 127.0.0.1) that asks for a login; the job parks
// (waiting_human, browser_login) and the task view shows "Log in for the
// agent" with the live view of the task's browser. The person clicks the
// username field on the picture and types, the same for the password, presses
// Enter, sees the logged-in page and presses Done: the job resumes with the
// session (cookie) and the agent completes quoting the private page. Debian's
// Chromium (the page, and the server's task browser) against a real
// `maestro serve` + `maestro-fakellm`; a screenshot per step.
//
// Twice: once with the job's worker in serve's process, and once across
// processes (issue 48) — `serve --workers 0` (the API and the UI) and a
// separate `maestro worker` process whose BrowserService holds the task's
// browser; the live view's screenshots, clicks, typing and Done then travel
// through the store to that process, and the job resumes there.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { createWriteStream, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  apiCall,
  ARTIFACTS,
  freePort,
  launchBrowser,
  MAESTRO_BIN,
  screenshot,
  startStack,
  stopChild,
  TOKEN,
} from './harness.mjs';

// The site's form, at fixed spots of the 1280×800 viewport (CSS px).
const USER_FIELD = { x: 40 + 150, y: 80 + 16 }; // centre of #username (300×32 at 40,80)
const PASS_FIELD = { x: 40 + 150, y: 140 + 16 }; // centre of #password (300×32 at 40,140)
const VIEWPORT = { width: 1280, height: 800 };

const LOGIN_PAGE = `<!doctype html>
<html><head><title>Sign in</title><style>
  body { margin: 0; font: 16px sans-serif; }
  h1 { position: absolute; left: 40px; top: 10px; margin: 0; font-size: 24px; }
  input, button { position: absolute; left: 40px; width: 300px; height: 32px; box-sizing: border-box; font-size: 16px; }
  #username { top: 80px; } #password { top: 140px; } #submit { top: 200px; }
</style></head><body>
  <h1>Sign in to the report site</h1>
  <form method="post" action="/login">
    <input id="username" name="username" placeholder="username" autocomplete="off">
    <input id="password" name="password" type="password" placeholder="password">
    <button id="submit" type="submit">Sign in</button>
  </form>
</body></html>`;

const PRIVATE_PAGE = `<!doctype html>
<html><head><title>Private report</title></head><body style="font: 20px sans-serif; margin: 40px">
  <h1>Private report</h1>
  <p>Welcome alice, SECRET-REPORT-42</p>
</body></html>`;

// What the site saw: form submissions and the private page served logged in.
const site = { logins: [], privateServed: 0, formServed: 0 };

function startSite(port) {
  const server = createServer((req, res) => {
    const url = new URL(req.url, `http://127.0.0.1:${port}`);
    if (req.method === 'GET' && url.pathname === '/private') {
      const loggedIn = /(?:^|;\s*)session=ok(?:;|$)/.test(req.headers.cookie ?? '');
      if (loggedIn) site.privateServed += 1;
      else site.formServed += 1;
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' });
      res.end(loggedIn ? PRIVATE_PAGE : LOGIN_PAGE);
      return;
    }
    if (req.method === 'POST' && url.pathname === '/login') {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        const form = new URLSearchParams(body);
        const ok = form.get('username') === 'alice' && form.get('password') === 'hunter2';
        site.logins.push({ username: form.get('username'), password: form.get('password'), ok });
        const headers = { Location: '/private' };
        if (ok) headers['Set-Cookie'] = 'session=ok; Path=/; HttpOnly';
        res.writeHead(303, headers);
        res.end();
      });
      return;
    }
    res.writeHead(404, { 'Content-Type': 'text/plain' });
    res.end('not found');
  });
  return new Promise((res) => server.listen(port, '127.0.0.1', () => res(server)));
}

// The fake model: open the private page; once a tool result carries the
// logged-in page, complete quoting it.
function script(port) {
  const url = `http://127.0.0.1:${port}/private`;
  return JSON.stringify({
    replies: [
      {
        match: { any_message_contains: ['e2e-browse', 'Welcome alice'] },
        repeat: 0,
        tool_calls: [{ name: 'complete', arguments: { status: 'success', result: 'RESULT-BROWSE the page says: Welcome alice, SECRET-REPORT-42' } }],
      },
      {
        match: { any_message_contains: 'e2e-browse' },
        repeat: 4,
        tool_calls: [{ name: 'BrowseWeb', arguments: { action: 'open', url } }],
      },
    ],
  });
}

let stack;
let worker; // the `maestro worker` process of the split stack
let server;
let browser;
let page;
let scriptDir;
let scriptPath;

before(async () => {
  const sitePort = await freePort();
  server = await startSite(sitePort);
  scriptDir = mkdtempSync(join(tmpdir(), 'maestro-e2e-browse-'));
  scriptPath = join(scriptDir, 'browse-script.json');
  writeFileSync(scriptPath, script(sitePort));
  browser = await launchBrowser();
});

// A stack (serve with `workers` threads, and with 0 a `maestro worker`
// process beside it) and a page signed in to its UI.
async function startBrowsing(name, workers) {
  const chromium = process.env.CHROMIUM_BIN ?? '/usr/bin/chromium';
  stack = await startStack({
    script: scriptPath,
    name,
    workers,
    config: () => `browser:\n  chromium: ${JSON.stringify(chromium)}\n  allowed_hosts: ["127.0.0.1"]\n`,
  });
  if (workers === 0) {
    worker = spawn(MAESTRO_BIN(), ['--config', stack.config, 'worker', '--workers', '1'], {
      env: stack.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const log = createWriteStream(join(ARTIFACTS, `${name}-worker.log`));
    worker.stdout.pipe(log);
    worker.stderr.pipe(log);
  }
  site.logins = [];
  site.privateServed = 0;
  site.formServed = 0;
  const context = await browser.newContext({ viewport: { width: 1280, height: 1000 } });
  page = await context.newPage();
  page.setDefaultTimeout(30000);
  await page.goto(stack.base);
  await page.getByLabel('API token').fill(TOKEN);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'New task' }).waitFor();
}

async function stopBrowsing() {
  await page?.context().close();
  page = null;
  const workerCode = worker ? await stopChild(worker, 40000) : 0;
  worker = null;
  const code = await stack?.stop();
  stack = null;
  assert.equal(code, 0, 'maestro serve exits cleanly on SIGTERM');
  assert.equal(workerCode, 0, 'maestro worker exits cleanly on SIGTERM');
}

after(async () => {
  if (stack) await stopBrowsing().catch(() => {});
  await browser?.close();
  await new Promise((res) => (server ? server.close(res) : res()));
  if (scriptDir) rmSync(scriptDir, { recursive: true, force: true });
});

async function until(what, fn, ms = 30000) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

// Does one live-view action and waits until the server answered its input.
async function input(action) {
  const answered = page.waitForResponse((r) => r.url().includes('/browser/input') && r.request().method() === 'POST');
  await action();
  const res = await answered;
  assert.equal(res.status(), 200, `input accepted: ${await res.text()}`);
}

// Clicks the live view at a spot of the remote 1280×800 viewport.
async function clickRemote(img, spot) {
  // The shown page inside the picture's border (click positions are
  // relative to that box).
  const box = await img.evaluate((el) => ({ width: el.clientWidth, height: el.clientHeight }));
  assert.ok(box.width > 0, 'the live view is shown');
  await input(() =>
    img.click({ position: { x: (spot.x * box.width) / VIEWPORT.width, y: (spot.y * box.height) / VIEWPORT.height } }),
  );
}

// `reloadOnPark`: with SQLite, serve learns of another process's commits on
// its task stream's 15 s keep-alive tick (PostgreSQL has NOTIFY); the page
// is reloaded once the API shows the park instead of waiting for it.
async function loginThroughTheLiveView({ reloadOnPark = false } = {}) {
  const created = await apiCall(stack, '/api/local/tasks', {
    method: 'POST',
    body: JSON.stringify({ instruction: 'e2e-browse: read the private report', piece: 'research' }),
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const taskId = created.body.task.id;
  await page.goto(`${stack.base}/tasks/${taskId}`);
  if (reloadOnPark) {
    await until('the park', async () => {
      const t = await apiCall(stack, `/api/local/tasks/${taskId}`);
      return t.body.latest_job?.status === 'waiting_human';
    });
    await page.reload();
  }

  // The job parks on the login page: the card with the live view.
  const card = page.getByRole('group', { name: 'Log in for the agent' });
  await card.waitFor();
  const detail = await apiCall(stack, `/api/local/tasks/${taskId}`);
  assert.equal(detail.body.latest_job.status, 'waiting_human');
  assert.equal(detail.body.latest_job.wait_reason, 'browser_login');
  assert.ok(site.formServed >= 1, 'the task browser loaded the login form');
  const img = card.getByRole('img', { name: "Live view of the agent's browser" });
  await img.waitFor();
  // The screenshot route itself: a PNG of the task browser.
  const shotRes = await fetch(`${stack.base}/api/local/jobs/${detail.body.latest_job.id}/browser/screenshot`, {
    headers: { Authorization: `Bearer ${TOKEN}` },
  });
  assert.equal(shotRes.status, 200);
  assert.match(shotRes.headers.get('content-type') ?? '', /image\/png/);
  // The picture reloads: its object URL changes about once a second.
  const first = await img.getAttribute('src');
  await until('the live view to reload', async () => (await img.getAttribute('src')) !== first, 10000);
  await screenshot(page, 'login-card');

  // Username: click the field on the picture, type.
  await clickRemote(img, USER_FIELD);
  await card.getByLabel('Text to type').fill('alice');
  await input(() => card.getByRole('button', { name: 'Type', exact: true }).click());
  // Password: the same, then Enter submits the form.
  await clickRemote(img, PASS_FIELD);
  await card.getByLabel('Text to type').fill('hunter2');
  await input(() => card.getByRole('button', { name: 'Type', exact: true }).click());
  await screenshot(page, 'login-typed');
  await input(() => card.getByRole('button', { name: 'Press Enter' }).click());

  // The site saw the login and served the private page to the task browser.
  await until('the login to reach the site', () => site.logins.length > 0);
  assert.deepEqual(site.logins[0], { username: 'alice', password: 'hunter2', ok: true });
  await until('the logged-in page', () => site.privateServed > 0);
  // Let the live view pick up the logged-in page (a screenshot taken after
  // the page was served) before the artifact.
  await page.waitForTimeout(500);
  const shown = await img.getAttribute('src');
  try {
    await until('a fresh screenshot', async () => (await img.getAttribute('src')) !== shown, 10000);
  } catch (e) {
    await screenshot(page, 'no-fresh-screenshot');
    throw new Error(`${e.message}; the card says: ${await card.innerText()}`);
  }
  await screenshot(page, 'logged-in');

  // Done: the job resumes in the same movement with the session; the card goes.
  await card.getByRole('button', { name: 'Done — I have logged in' }).click();
  await card.waitFor({ state: 'detached' });
  await page.locator('.chat-header .badge[data-status="succeeded"]').waitFor({ timeout: 60000 });
  await page.getByTestId('feed').getByText('SECRET-REPORT-42', { exact: false }).first().waitFor();
  await screenshot(page, 'task-succeeded');

  const done = await apiCall(stack, `/api/local/tasks/${taskId}`);
  assert.equal(done.body.latest_job.status, 'succeeded');
  assert.match(done.body.latest_job.result, /SECRET-REPORT-42/);
  // The session was kept: the private page was served with the cookie to the agent too.
  assert.ok(site.privateServed >= 1);
  // The password never reached the agent's conversation.
  const comments = await apiCall(stack, `/api/local/tasks/${taskId}/comments`);
  assert.ok(!JSON.stringify(comments.body).includes('hunter2'), 'the password is not in the task comments');
  return detail.body.latest_job.id;
}

test('log in for the agent through the live view, then Done resumes the task with the session', async () => {
  await startBrowsing('browser', 3);
  await loginThroughTheLiveView();
  await stopBrowsing();
});

test('the same login when the job runs on a separate maestro worker process (serve --workers 0)', async () => {
  await startBrowsing('browser-remote', 0);
  const jobId = await loginThroughTheLiveView({ reloadOnPark: true });
  // The browser was the worker's: serve has no worker threads, and the
  // worker logged the browser of this job (started, then closed at its end).
  const health = await apiCall(stack, '/api/health');
  assert.equal(health.status, 200);
  const ready = await fetch(`${stack.base}/api/ready`).then((r) => r.json());
  assert.equal(ready.workers?.configured, 0, `serve runs no worker threads: ${JSON.stringify(ready)}`);
  await stopBrowsing();
  await new Promise((r) => setTimeout(r, 300)); // the piped logs reach their files
  const workerLog = readFileSync(join(ARTIFACTS, 'browser-remote-worker.log'), 'utf8');
  assert.ok(workerLog.includes(`job ${jobId}: browser started`), 'the worker process ran the browser');
  const serveLog = readFileSync(join(ARTIFACTS, 'browser-remote-serve.log'), 'utf8');
  assert.ok(!serveLog.includes(`job ${jobId}: browser started`), 'serve ran no browser');
});
