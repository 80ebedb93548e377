// UI end-to-end tests: Debian's Chromium (headless, playwright-core, no
// browser download) against a real `maestro serve` + `maestro-fakellm`
// (e2e-script.yaml). Each step asserts on what the page shows and saves a
// screenshot under build/ui-e2e-artifacts/. The steps share one server and
// one page and run in order.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { apiCall, launchBrowser, screenshot, startStack, TOKEN, UI_DIR } from './harness.mjs';

let stack;
let browser;
let page;

before(async () => {
  stack = await startStack({ script: join(UI_DIR, 'e2e', 'e2e-script.yaml'), name: 'e2e' });
  browser = await launchBrowser();
  page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
  page.setDefaultTimeout(20000);
});

after(async () => {
  await browser?.close();
  const code = await stack?.stop();
  assert.equal(code, 0, 'maestro serve exits cleanly on SIGTERM');
});

const feed = () => page.getByTestId('feed');

// Creates a task through the New task dialog and waits until its chat is open.
async function createTask(instruction) {
  await page.getByRole('button', { name: 'New task' }).click();
  await page.getByLabel('Instruction', { exact: true }).fill(instruction);
  await page.getByRole('button', { name: 'Create task' }).click();
  await page.waitForURL(/\/tasks\//);
  await feed().getByText(instruction).first().waitFor();
}

test('sign in with the token, once', async () => {
  await page.goto(stack.base);
  await page.getByLabel('API token').fill('wrong-token');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('alert').getByText('not accepted').waitFor();
  await page.getByLabel('API token').fill(TOKEN);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'New task' }).waitFor();
  assert.equal(await page.evaluate(() => localStorage.getItem('maestro.token')), TOKEN);
  await screenshot(page, 'signed-in');
});

test('the New task dialog picks a space, the ephemeral workspace first', async () => {
  await page.getByRole('button', { name: 'New task' }).click();
  const dialog = page.getByRole('dialog', { name: 'New task' });
  const picker = dialog.getByLabel('Space', { exact: true });
  await picker.waitFor();
  assert.equal(await picker.evaluate((el) => el.tagName), 'SELECT', 'a picker, not a free text field');
  const options = await picker.locator('option').allInnerTexts();
  assert.equal(options[0], 'ephemeral workspace (new for this task)');
  assert.equal(await picker.inputValue(), '', 'no space chosen by default');
  await screenshot(page, 'space-picker');
  await dialog.getByRole('button', { name: 'Close' }).click();
  await page.getByRole('dialog', { name: 'New task' }).waitFor({ state: 'detached' });
});

test('create a task and see the answer stream in', async () => {
  await createTask('e2e-stream: say something');
  const text = feed().getByTestId('assistant-text').first();
  await text.getByText('STREAM-START', { exact: false }).waitFor();
  const early = (await text.innerText()).length;
  await screenshot(page, 'streaming');
  await feed().getByText('STREAM-END', { exact: false }).waitFor();
  const full = (await text.innerText()).length;
  assert.ok(early < full, `text grew while streaming (${early} -> ${full} chars)`);
  await feed().getByText('RESULT-STREAM done').waitFor();
  await page.locator('.chat-header .badge[data-status="succeeded"]').waitFor();
  await screenshot(page, 'stream-finished');
});

test('attach files to a new task: chips with remove, then the agent reads the file', async () => {
  await page.getByRole('button', { name: 'New task' }).click();
  const dialog = page.getByRole('dialog', { name: 'New task' });
  await dialog.getByLabel('Instruction', { exact: true }).fill('e2e-attach: read the note');
  await dialog.getByTestId('attach-input').setInputFiles([
    { name: 'e2e-note.txt', mimeType: 'text/plain', buffer: Buffer.from('ATTACH-CONTENT hello\n') },
    { name: 'drop-me.txt', mimeType: 'text/plain', buffer: Buffer.from('x') },
  ]);
  const chips = dialog.getByRole('list', { name: 'Attached files' });
  await chips.getByText('e2e-note.txt').waitFor();
  await chips.getByRole('button', { name: 'Remove drop-me.txt' }).click();
  await chips.getByText('drop-me.txt').waitFor({ state: 'detached' });
  await screenshot(page, 'attach-chips');
  await dialog.getByRole('button', { name: 'Create task' }).click();
  await page.waitForURL(/\/tasks\//);
  await feed().getByText('RESULT-ATTACH read').waitFor();
  const id = page.url().match(/\/tasks\/([0-9a-f-]{36})/)[1];
  const listed = (await apiCall(stack, `/api/local/tasks/${id}/attachments`)).body;
  assert.deepEqual(listed.attachments.map((a) => a.path), ['attachments/e2e-note.txt']);
  assert.equal(listed.attachments[0].delivered, true);
});

test('approve a tool request and see the job resume', async () => {
  await createTask('e2e-tool: approve me');
  const card = page.getByTestId('tool-request');
  await card.waitFor();
  const args = await card.locator('.approval-args').innerText();
  assert.match(args, /"path": "notes\.txt"/, 'the card shows the exact arguments');
  assert.match(await card.innerText(), /E2E-REASON save the note/);
  // The write gate: a message while the request is pending is refused, and explained.
  await page.getByLabel('Message').fill('hello while waiting');
  await page.getByLabel('Message').press('Enter');
  await page.locator('.gate-note.error').getByText('waiting for your decision').waitFor();
  await screenshot(page, 'tool-request-pending');
  await card.getByRole('button', { name: 'Approve once' }).click();
  await feed().getByText('APPROVAL-SEEN', { exact: false }).waitFor();
  const toolCard = feed().locator('[data-testid="tool-card"][data-tool="WriteFile"]');
  await toolCard.waitFor();
  await feed().getByText('RESULT-WROTE notes.txt saved').waitFor();
  await toolCard.locator('.tool-head').click();
  assert.match(await toolCard.innerText(), /wrote \d+ bytes/, 'the tool card shows the result');
  assert.equal(await page.getByTestId('tool-request').count(), 0, 'the card is gone once decided');
  assert.equal(await page.locator('.gate-note.error').count(), 0, 'and so is the refusal note');
  await screenshot(page, 'tool-approved-resumed');
});

test('deny a tool request and see the agent react', async () => {
  await createTask('e2e-tool: deny me');
  const card = page.getByTestId('tool-request');
  await card.getByRole('button', { name: 'Deny' }).click();
  await feed().getByText('DENIAL-SEEN', { exact: false }).waitFor();
  await feed().getByText('RESULT-DENIED the file was not written').waitFor();
  assert.equal(await feed().locator('[data-tool="WriteFile"]').count(), 0, 'no WriteFile after a denial');
  await screenshot(page, 'tool-denied');
});

test('approve a package request', async () => {
  await createTask('e2e-package: chart');
  const card = page.getByTestId('package-request');
  await card.waitFor();
  assert.match(await card.innerText(), /matplotlib/);
  assert.match(await card.innerText(), /3\.8\.4/);
  await screenshot(page, 'package-request');
  await card.getByRole('button', { name: 'Approve' }).click();
  await feed().getByText('RESULT-PACKAGE chart drawn').waitFor();
});

test('a delegate sub-agent streams nested under its call', async () => {
  await createTask('e2e-delegate: count the words');
  await feed().getByText('RESULT-DELEGATE the sub-agent counted').waitFor();
  const card = feed().locator('[data-testid="tool-card"][data-tool="delegate"]');
  await card.waitFor();
  // The sub-agent's text is not in the job's own feed, only under the card.
  assert.equal(await feed().getByText('SUBAGENT-TEXT', { exact: false }).count(), 0);
  await card.locator('.tool-head').first().click();
  await card.locator('.nested').getByText('SUBAGENT-TEXT', { exact: false }).waitFor();
  assert.match(await card.locator('.tool-detail').first().innerText(), /SUB-RESULT 42 words/);
  await screenshot(page, 'delegate-nested');
});

test('answer an ASK question', async () => {
  await createTask('e2e-ask: pick a colour');
  const ask = page.getByTestId('ask-question');
  await ask.getByText('QUESTION-COLOR which colour?').waitFor();
  await page.locator('.chat-header .badge[data-status="waiting_human"]').waitFor();
  await screenshot(page, 'ask-question');
  const box = page.getByLabel('Message');
  await box.fill('Blue,');
  await box.press('Shift+Enter');
  await box.pressSequentially('with a white border');
  assert.equal(await box.inputValue(), 'Blue,\nwith a white border', 'Shift+Enter is a newline');
  await box.press('Enter');
  await feed().locator('[data-kind="answer"]').getByText('with a white border', { exact: false }).waitFor();
  await feed().getByText('RESULT-ANSWERED thanks for the answer').waitFor();
  // The answer reached the follow-up's prompt: the server set delivered_at.
  await feed().locator('[data-kind="answer"]').getByTestId('delivery').getByText('delivered', { exact: true }).waitFor();
  assert.equal(await page.getByTestId('ask-question').count(), 0);
  await screenshot(page, 'ask-answered');
});

test('with the streams blocked, REST polling still shows the task', async () => {
  // Fail every SSE request (task events and job streams); JSON polling of the
  // same events route still passes.
  const blockSse = (route) =>
    route.request().headers()['accept'] === 'text/event-stream' ? route.abort() : route.continue();
  await page.route(/\/api\/local\/(tasks\/[^/]+\/events|jobs\/[^/]+\/stream)/, blockSse);
  await createTask('e2e-stream: polled');
  await page.getByTestId('connection').getByText('polling').waitFor();
  await feed().getByText('RESULT-STREAM done').waitFor();
  await page.locator('.chat-header .badge[data-status="succeeded"]').waitFor();
  await screenshot(page, 'polling-fallback');
  await page.unroute(/\/api\/local\/(tasks\/[^/]+\/events|jobs\/[^/]+\/stream)/, blockSse);
});

test('reload the page mid-stream and lose nothing', async () => {
  await createTask('e2e-long: a long answer');
  const text = () => feed().getByTestId('assistant-text').first();
  await text().getByText('Part 2.', { exact: false }).waitFor({ timeout: 30000 });
  const before = await text().innerText();
  await screenshot(page, 'long-before-reload');
  await page.reload();
  await text().getByText('LONG-START', { exact: false }).waitFor();
  // Everything shown before the reload is there again, and it keeps growing.
  await page.waitForFunction(
    (n) => (document.querySelector('[data-testid="assistant-text"]')?.textContent ?? '').length > n,
    before.length,
  );
  const afterReload = await text().innerText();
  assert.ok(afterReload.startsWith(before.trim().slice(0, before.trim().length - 1)), 'no text lost across the reload');
  assert.equal(await page.getByTestId('connection').innerText(), 'live');
  await screenshot(page, 'long-after-reload');
});

test('cancel a running task, then Continue it', async () => {
  await page.locator('.chat-header .badge[data-status="running"]').waitFor();
  // A comment while the long answer streams waits for the agent's next step.
  await page.getByLabel('Message').fill('e2e meanwhile: keep it short');
  await page.getByLabel('Message').press('Enter');
  const mine = feed().locator('.msg-user').filter({ hasText: 'e2e meanwhile: keep it short' });
  await mine.getByTestId('delivery').getByText('will be delivered to the next step').waitFor();
  assert.equal(await feed().locator('[data-kind="instruction"]').getByTestId('delivery').count(), 0,
    'the instruction has no delivery line');
  await screenshot(page, 'comment-pending-delivery');
  await page.getByRole('button', { name: 'Cancel', exact: true }).click();
  await page.locator('.chat-header .badge[data-status="cancelled"]').waitFor();
  await feed().getByText('Job cancelled.').waitFor();
  assert.equal(await feed().getByText('LONG-END').count(), 0, 'the stream stopped before its end');
  assert.equal(await page.getByRole('button', { name: 'Cancel', exact: true }).count(), 0);
  await page.getByRole('button', { name: 'Continue', exact: true }).waitFor();
  // The activity timeline lists the job's status changes, the cancel included.
  await page.getByRole('button', { name: 'Activity', exact: true }).click();
  const activity = page.getByRole('complementary', { name: 'Activity' });
  await activity.getByText('job running → cancelled').waitFor();
  assert.match(await activity.innerText(), /job queued → running/);
  await screenshot(page, 'cancelled');
  await page.getByRole('button', { name: 'Activity', exact: true }).click();
  // Continue starts a new job on the finished task; it runs and can be cancelled too.
  await page.getByRole('button', { name: 'Continue', exact: true }).click();
  await page.locator('.toast').getByText('Continuing in a new job').waitFor();
  await page.locator('.chat-header .badge[data-status="running"]').waitFor();
  await page.getByRole('button', { name: 'Cancel', exact: true }).click();
  await page.locator('.chat-header .badge[data-status="cancelled"]').waitFor();
  assert.equal(await feed().getByText('Job cancelled.').count(), 2, 'both jobs show their cancel');
});

test('task list: badges, filter and search', async () => {
  await page.getByLabel('Search tasks').fill('e2e-ask');
  const items = page.locator('.task-item');
  await page.waitForFunction(() => document.querySelectorAll('.task-item').length === 1);
  assert.match(await items.first().innerText(), /e2e-ask/);
  await page.getByLabel('Search tasks').fill('');
  await page.getByLabel('Filter by status').selectOption('cancelled');
  await page.waitForFunction(() => document.querySelectorAll('.task-item').length === 1);
  assert.match(await items.first().innerText(), /e2e-long/);
  await page.getByLabel('Filter by status').selectOption('all');
  await page.waitForFunction(() => document.querySelectorAll('.task-item').length >= 7);
  // The notification bell counts what finished or waited for the person.
  const bell = page.getByRole('button', { name: /Notifications \(\d+ unread\)/ });
  assert.ok(Number((await bell.getAttribute('aria-label')).match(/\d+/)[0]) > 0, 'unread notifications');
  await bell.click();
  const panel = page.getByRole('dialog', { name: 'Notifications' });
  // Each says what happened to the task, named by its title or instruction.
  await panel.getByText('needs you', { exact: true }).first().waitFor();
  await panel.getByText('question answered', { exact: true }).first().waitFor();
  await panel.getByText('finished', { exact: true }).first().waitFor();
  assert.match(await panel.innerText(), /e2e-ask: pick a colour/);
  await screenshot(page, 'task-list-notifications');
  await panel.getByRole('button', { name: 'Mark all read' }).click();
  await page.getByRole('button', { name: 'Notifications (0 unread)' }).waitFor();
  await page.getByRole('button', { name: 'Notifications (0 unread)' }).click(); // close the panel
});

test('phone width: the chat is usable', async () => {
  await page.setViewportSize({ width: 390, height: 844 });
  await page.reload();
  await page.getByLabel('Message').waitFor();
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(width <= 390, `no horizontal scroll at phone width (${width}px)`);
  await screenshot(page, 'phone-width-chat');
  await page.getByRole('button', { name: 'Back to tasks' }).click();
  await page.locator('.task-item').first().waitFor();
  await screenshot(page, 'phone-width-list');
  await page.setViewportSize({ width: 1280, height: 860 });
});
