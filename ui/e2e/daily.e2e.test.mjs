// Issue 17 "Daily use" end to end: markdown rendering (and what it must not
// run), collapsed long tool results, the workspace pane (tree, viewer, diff),
// one card per approved call, tool cards from the ledger after a server
// restart, tokens and cost, titles, toasts that never cover Approve/Deny and
// go stale, the "Task not found" page, keyboard shortcuts and a tool the
// movement forbids (no approval card), and (issue 18) a task parked on its
// budget: the card, raise and continue, the task finishes. Debian's Chromium against a real
// `maestro serve` + `maestro-fakellm` (e2e-script.yaml); a screenshot per step.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { apiCall, launchBrowser, screenshot, startStack, TOKEN, UI_DIR } from './harness.mjs';

let stack;
let browser;
let context;
let page;

before(async () => {
  stack = await startStack({ script: join(UI_DIR, 'e2e', 'e2e-script.yaml'), name: 'daily' });
  browser = await launchBrowser();
  context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: stack.base });
  page = await context.newPage();
  page.setDefaultTimeout(20000);
  await page.goto(stack.base);
  await page.getByLabel('API token').fill(TOKEN);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'New task' }).waitFor();
});

after(async () => {
  await browser?.close();
  const code = await stack?.stop();
  assert.equal(code, 0, 'maestro serve exits cleanly on SIGTERM');
});

const feed = () => page.getByTestId('feed');
const taskIdOfPage = () => decodeURIComponent(new URL(page.url()).pathname.split('/')[2] ?? '');

async function createTask(instruction) {
  await page.getByRole('button', { name: 'New task' }).click();
  await page.getByLabel('Instruction', { exact: true }).fill(instruction);
  await page.getByRole('button', { name: 'Create task' }).click();
  await page.waitForURL(/\/tasks\//);
  await feed().getByText(instruction).first().waitFor();
  return taskIdOfPage();
}

let mdTask = '';
test('markdown: headings, lists, tables, code with a copy button — and no raw HTML', async () => {
  await page.evaluate(() => {
    window.__xss = undefined;
  });
  mdTask = await createTask('e2e-markdown: release notes');
  const answer = feed().getByTestId('assistant-text').first();
  await answer.locator('h1').getByText('MD-HEADING').waitFor();
  // While it streams, the cursor stays at the end of the growing markdown.
  const streaming = await answer.locator('.cursor').count();
  await screenshot(page, 'markdown-streaming');
  await answer.getByText('MD-TAIL', { exact: false }).waitFor();
  await feed().locator('[data-kind="result"] strong').getByText('RESULT-MD').waitFor();
  assert.equal(streaming, 1, 'a blinking cursor while the answer streams');
  assert.equal(await answer.locator('.cursor').count(), 0, 'no cursor once it finished');
  assert.equal(await answer.locator('li').filter({ hasText: 'MD-ITEM-ONE' }).count(), 1);
  assert.equal(await answer.locator('li').count(), 2);
  assert.equal(await answer.locator('table td').filter({ hasText: 'MD-CELL' }).count(), 1);
  assert.equal(await answer.locator('table th').count(), 2);
  const code = answer.locator('pre code.language-python');
  assert.match(await code.innerText(), /return "MD-CODE"/);
  assert.ok((await code.locator('span[class^="hljs-"]').count()) > 0, 'the code is highlighted');
  // Links: https kept with rel=noopener, javascript: dropped.
  const safe = answer.getByRole('link', { name: 'safe link' });
  assert.equal(await safe.getAttribute('href'), 'https://example.com/docs');
  assert.match(await safe.getAttribute('rel'), /noopener/);
  assert.equal(await answer.getByRole('link', { name: 'bad link' }).count(), 0, 'no javascript: link');
  // Raw HTML is shown as text: nothing ran, no <img>/<script> element exists.
  assert.equal(await page.evaluate(() => window.__xss), undefined, 'no script or onerror handler ran');
  assert.equal(await feed().locator('script, img').count(), 0);
  assert.match(await answer.innerText(), /<img src="x" onerror=/, 'the raw HTML is visible as text');
  // The result comment is markdown too.
  assert.equal(await feed().locator('[data-kind="result"] li').count(), 2);
  // Copy copies the code.
  const copy = answer.getByRole('button', { name: 'Copy code' });
  await copy.click();
  await answer.getByRole('button', { name: 'Copy code' }).getByText('Copied').waitFor();
  const clip = await page.evaluate(() => navigator.clipboard.readText());
  assert.match(clip, /def hello\(\):\n {4}return "MD-CODE"/);
  await screenshot(page, 'markdown-rendered');
});

test('a long tool result is collapsed with "show more"', async () => {
  await createTask('e2e-collapse: thirty lines');
  await feed().getByText('RESULT-COLLAPSE long result seen').waitFor();
  const card = feed().locator('[data-testid="tool-card"][data-tool="delegate"]').first();
  await card.locator('.tool-head').first().click();
  const more = card.locator('.tool-detail').first().getByRole('button', { name: /show more/ }).last();
  await more.waitFor();
  const detail = card.locator('.tool-detail').first();
  assert.doesNotMatch(await detail.innerText(), /COLLAPSE-LINE-30/, 'collapsed: the last lines are hidden');
  await screenshot(page, 'tool-result-collapsed');
  await more.click();
  await detail.getByText('COLLAPSE-LINE-30', { exact: false }).first().waitFor();
  await screenshot(page, 'tool-result-expanded');
});

let filesTask = '';
test('one card per approved call: waiting while parked, then done', async () => {
  filesTask = await createTask('e2e-files: save a note');
  const request = page.getByTestId('tool-request');
  await request.waitFor();
  const parked = feed().locator('[data-testid="tool-card"][data-tool="RequestTool"]');
  await parked.first().waitFor();
  assert.equal(await parked.count(), 1);
  assert.equal(await parked.first().getAttribute('data-state'), 'waiting', 'a parked call waits (⌛), it is not done');
  assert.match(await parked.first().innerText(), /waiting/);
  await screenshot(page, 'request-waiting');
  await request.getByRole('button', { name: 'Approve once' }).click();
  await feed().getByText('RESULT-FILES NOTE.md saved').waitFor();
  assert.equal(await parked.count(), 1, 'the park and its replay are one card');
  assert.equal(await parked.first().getAttribute('data-state'), 'ok');
  await screenshot(page, 'request-one-card');
});

test('the WriteFile card shows the content as text and opens it in the workspace pane', async () => {
  const write = feed().locator('[data-testid="tool-card"][data-tool="WriteFile"]');
  await write.locator('.tool-head').click();
  const content = write.getByTestId('file-tool-content');
  await content.waitFor();
  const text = await content.innerText();
  assert.match(text, /# NOTE-HEADING\n\n- NOTE-ITEM one/, 'the written text, not an escaped JSON string');
  assert.doesNotMatch(text, /\\n/);
  const open = content.getByRole('button', { name: 'Open in Files' });
  await open.click();
  const pane = page.getByRole('complementary', { name: 'Workspace' });
  await pane.waitFor();
  await pane.locator('.tree-item[data-path="NOTE.md"]').waitFor();
  const viewer = pane.getByTestId('file-viewer');
  await viewer.getByText('NOTE-HEADING', { exact: false }).first().waitFor();
  assert.equal(await viewer.getAttribute('data-path'), 'NOTE.md');
  assert.ok((await viewer.locator('.hljs-section, .hljs-bullet').count()) > 0, 'markdown source highlighted');
  await screenshot(page, 'workspace-file');
  // Rendered markdown view of the file.
  await viewer.getByRole('button', { name: 'Rendered' }).click();
  await viewer.locator('h1').getByText('NOTE-HEADING').waitFor();
  // The download sends the token (fetch + blob) and saves the bytes.
  const [download] = await Promise.all([page.waitForEvent('download'), viewer.getByTestId('download').click()]);
  assert.equal(download.suggestedFilename(), 'NOTE.md');
  // The diff: NOTE.md added with its lines.
  await pane.getByRole('tab', { name: /Changes/ }).click();
  const diff = pane.getByTestId('diff-view');
  if (await diff.count()) {
    const file = diff.locator('[data-testid="diff-file"][data-path="NOTE.md"]');
    await file.waitFor();
    assert.equal(await file.locator('.diff-status').textContent(), 'added');
    assert.match(await file.locator('.diff-add').first().innerText(), /^\+/);
    assert.match(await file.innerText(), /\+# NOTE-HEADING/);
    const scopes = await pane.getByLabel('Diff scope').locator('option').allInnerTexts();
    assert.ok(scopes.some((s) => /^Job 1/.test(s)), `a per-job diff is offered (${scopes.join(', ')})`);
  }
  await screenshot(page, 'workspace-diff');
  await pane.getByRole('button', { name: 'Close the workspace' }).click();
});

test('after a server restart the tool cards are still there (the ledger)', async () => {
  assert.equal(await stack.restart(), 0, 'serve stops cleanly');
  await page.goto(`${stack.base}/tasks/${filesTask}`);
  await feed().getByText('RESULT-FILES NOTE.md saved').waitFor();
  const cards = feed().locator('[data-testid="tool-card"]');
  await feed().locator('[data-testid="tool-card"][data-tool="WriteFile"]').waitFor();
  assert.equal(await feed().locator('[data-tool="RequestTool"]').count(), 1, 'one RequestTool card');
  assert.equal(await feed().locator('[data-tool="RequestTool"]').getAttribute('data-state'), 'ok');
  assert.ok((await cards.count()) >= 2);
  await feed().locator('[data-tool="WriteFile"] .tool-head').click();
  await feed().getByText('wrote ', { exact: false }).first().waitFor();
  await screenshot(page, 'cards-after-restart');
});

test('the header shows tokens, cache hits and cost; the list shows cost per row', async () => {
  await page.goto(`${stack.base}/tasks/${mdTask}`);
  await page.locator('.chat-header .badge[data-status="succeeded"]').waitFor();
  const meta = page.getByTestId('chat-meta');
  assert.doesNotMatch(await meta.innerText(), /\b1 model calls\b/, 'pluralized');
  assert.match(await meta.innerText(), /\d+ model calls?\b/);
  const detail = await apiCall(stack, `/api/local/tasks/${mdTask}`);
  assert.ok(detail.body.task.usage, 'the task carries usage');
  const usage = meta.getByTestId('usage');
  await usage.waitFor();
  const text = await usage.innerText();
  assert.match(text, /prompt \/ .* cached \/ .* out/);
  assert.match(text, /\d+% cache hit/);
  if (stack.priced) {
    assert.notEqual(detail.body.task.usage.cost, null, 'the harness configured a price table');
    assert.match(text, /\$\d+\.\d{2,4}/, `the cost shows (${text})`);
    const row = page.locator(`.task-item[data-task-id="${mdTask}"]`);
    assert.match(await row.getByTestId('usage').innerText(), /^\$\d/);
  }
  const divider = feed().getByTestId('job-divider').first();
  assert.match(await divider.innerText(), /Job 1 .*model call/);
  await screenshot(page, 'usage-header');
});

test('rename the task; the list, the header and document.title follow', async () => {
  await page.getByRole('button', { name: 'Rename task' }).click();
  const field = page.getByLabel('Task title');
  await field.fill('');
  await field.press('Enter');
  await page.locator('.title-row').getByRole('alert').getByText(/\S/).waitFor();
  await screenshot(page, 'rename-refused');
  await field.fill('Release notes, rendered');
  await field.press('Enter');
  await page.locator('.chat-header h2').getByText('Release notes, rendered').waitFor();
  await page.locator(`.task-item[data-task-id="${mdTask}"]`).getByText('Release notes, rendered').waitFor();
  await page.waitForFunction(() => document.title.startsWith('Release notes, rendered'));
  // Relative times with the absolute time as a tooltip.
  const time = page.locator(`.task-item[data-task-id="${mdTask}"] time`);
  assert.match(await time.innerText(), /just now|min ago/);
  assert.ok((await time.getAttribute('title')).length > 6);
  await screenshot(page, 'renamed');
});

// Whether a toast's box overlaps a control, and what is on top at the
// control's centre.
async function toastCovers(control) {
  await control.scrollIntoViewIfNeeded();
  return page.evaluate((el) => {
    const r = el.getBoundingClientRect();
    const top = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
    const overlaps = [...document.querySelectorAll('.toast')].some((t) => {
      const b = t.getBoundingClientRect();
      return b.left < r.right && b.right > r.left && b.top < r.bottom && b.bottom > r.top;
    });
    return { onTop: el.contains(top), overlaps };
  }, await control.elementHandle());
}

test('toasts never cover Approve / Deny (desktop and phone), a stale one disappears', async () => {
  const id = await createTask('e2e-tool: toast check');
  const request = page.getByTestId('tool-request');
  await request.waitFor();
  // The bell toasts "needs you" for this task (polled every 5 s).
  const toast = page.locator(`.toast[data-topic="needs_you"][data-task-id="${id}"]`);
  await toast.waitFor({ timeout: 15000 });
  for (const name of ['Approve once', 'Deny']) {
    const r = await toastCovers(request.getByRole('button', { name }));
    assert.deepEqual(r, { onTop: true, overlaps: false }, `${name} is not covered on desktop`);
  }
  await screenshot(page, 'toast-desktop');
  await page.setViewportSize({ width: 390, height: 844 });
  await toast.waitFor();
  for (const name of ['Approve once', 'Deny']) {
    const r = await toastCovers(request.getByRole('button', { name }));
    assert.deepEqual(r, { onTop: true, overlaps: false }, `${name} is not covered at phone width`);
  }
  await screenshot(page, 'toast-phone');
  await page.setViewportSize({ width: 1280, height: 860 });
  // Decided: the task no longer needs the person, the toast goes.
  await request.getByRole('button', { name: 'Approve once' }).click();
  await feed().getByText('RESULT-WROTE notes.txt saved').waitFor();
  await toast.waitFor({ state: 'detached', timeout: 10000 });
  await screenshot(page, 'toast-gone');
});

test('a deep link to a missing or malformed task shows "Task not found"', async () => {
  for (const id of ['00000000-0000-0000-0000-000000000000', 'not a task id!']) {
    await page.goto(`${stack.base}/tasks/${encodeURIComponent(id)}`);
    await page.getByTestId('not-found').getByRole('heading', { name: 'Task not found' }).waitFor();
    assert.equal(await page.getByText('Loading…').count(), 0);
    assert.equal(await page.title(), 'Task not found — maestro');
  }
  await screenshot(page, 'not-found');
  await page.getByTestId('not-found').getByRole('button', { name: 'All tasks' }).click();
  await page.waitForURL(`${stack.base}/`);
});

test('keyboard: n new task, / search, Esc closes; none while typing', async () => {
  await page.locator('body').click({ position: { x: 700, y: 400 } });
  await page.keyboard.press('n');
  const dialog = page.getByRole('dialog', { name: 'New task' });
  await dialog.waitFor();
  // Typing an "n" in the dialog's field is text, not a shortcut.
  await page.keyboard.type('n');
  assert.equal(await page.getByLabel('Instruction', { exact: true }).inputValue(), 'n');
  await screenshot(page, 'shortcut-new-task');
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'detached' });
  await page.keyboard.press('/');
  // The shortcut focuses the search on the next tick (App's focusSearch: a
  // narrow screen first leaves the task view), so wait for it, briefly.
  await page
    .waitForFunction(() => document.activeElement?.getAttribute('aria-label') === 'Search tasks', null, {
      timeout: 2000,
    })
    .catch(() => {});
  assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('aria-label')), 'Search tasks');
  await page.keyboard.type('n');
  assert.equal(await page.getByRole('dialog', { name: 'New task' }).count(), 0, 'no dialog while typing in the search');
  await page.keyboard.press('Escape');
  // The bell's panel closes on Escape and on a press outside.
  await page.getByRole('button', { name: /Notifications/ }).click();
  await page.getByRole('dialog', { name: 'Notifications' }).waitFor();
  await page.keyboard.press('Escape');
  await page.getByRole('dialog', { name: 'Notifications' }).waitFor({ state: 'detached' });
  await page.getByRole('button', { name: /Notifications/ }).click();
  await page.getByRole('dialog', { name: 'Notifications' }).waitFor();
  await page.mouse.click(700, 500);
  await page.getByRole('dialog', { name: 'Notifications' }).waitFor({ state: 'detached' });
  // The dialog closes on a press on its backdrop too.
  await page.keyboard.press('n');
  await dialog.waitFor();
  await page.mouse.click(640, 12); // the backdrop, clear of the dialog and of the toast dock
  await dialog.waitFor({ state: 'detached' });
});

test('a tool the movement forbids is refused at once: no approval card, the agent is told', async () => {
  await page.getByRole('button', { name: 'New task' }).click();
  await page.getByLabel('Instruction', { exact: true }).fill('e2e-plan-write: plan the change');
  await page.getByLabel('Piece').selectOption('coding');
  await page.getByRole('button', { name: 'Create task' }).click();
  await page.waitForURL(/\/tasks\//);
  await feed().getByText('PLAN-REFUSED-SEEN', { exact: false }).waitFor();
  assert.equal(await page.getByTestId('tool-request').count(), 0, 'no approval card');
  const card = feed().locator('[data-testid="tool-card"][data-tool="RequestTool"]').first();
  await card.locator('.tool-head').click();
  await card.getByText("cannot be used in movement 'plan'", { exact: false }).waitFor();
  await screenshot(page, 'movement-forbids-tool');
});

test('budget: a task parks before the call that would pass max_tokens; raise and continue finishes it', async () => {
  // Calibration: what the first call of such a conversation costs.
  const cal = await apiCall(stack, '/api/local/tasks', { method: 'POST', body: JSON.stringify({ instruction: 'e2e-budgetcal: list the files' }) });
  assert.equal(cal.status, 201, JSON.stringify(cal.body));
  let first = 0;
  for (let i = 0; i < 200 && first === 0; i++) {
    const t = await apiCall(stack, `/api/local/tasks/${cal.body.task.id}`);
    if (t.body.latest_job?.status === 'succeeded') first = t.body.task.usage.prompt_tokens + t.body.task.usage.completion_tokens;
    else await new Promise((r) => setTimeout(r, 100));
  }
  assert.ok(first > 0, 'calibration task finished');
  const maxTokens = Math.floor((first * 3) / 2); // room for the first call, not the second
  const created = await apiCall(stack, '/api/local/tasks', {
    method: 'POST',
    body: JSON.stringify({ instruction: 'e2e-budget: list the files', budget: { max_tokens: maxTokens } }),
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  await page.goto(`${stack.base}/tasks/${created.body.task.id}`);
  const card = page.getByTestId('budget-exceeded');
  await card.waitFor();
  await card.getByText(`of ${maxTokens} tokens`, { exact: false }).waitFor();
  await card.getByText('raise the budget or stop', { exact: false }).waitFor();
  await screenshot(page, 'budget-exceeded-card');
  const parked = await apiCall(stack, `/api/local/tasks/${created.body.task.id}`);
  assert.equal(parked.body.latest_job.wait_reason, 'budget_exceeded');
  assert.equal(parked.body.task.budget.spent.llm_calls, 1, 'the call that would pass it was not made');
  await card.getByLabel('New budget limit').fill(String(maxTokens * 10));
  await card.getByRole('button', { name: 'Raise and continue' }).click();
  await feed().getByText('RESULT-BUDGET', { exact: false }).first().waitFor();
  await card.waitFor({ state: 'detached' });
  const done = await apiCall(stack, `/api/local/tasks/${created.body.task.id}`);
  assert.equal(done.body.latest_job.status, 'succeeded');
  assert.equal(done.body.latest_job.id, created.body.job.id, 'the same job resumed');
  assert.equal(done.body.task.budget.max_tokens, maxTokens * 10);
  await screenshot(page, 'budget-raised-finished');
});
