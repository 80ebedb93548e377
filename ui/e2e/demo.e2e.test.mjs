// Demo mode end to end: `maestro serve` with no LLM server configured starts
// the bundled maestro-fakellm with demo/demo-script.yaml. The page says it is
// a demo model, offers the demo instructions, and a demo task with a tool
// approval runs to its result.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { launchBrowser, REPO, screenshot, startStack, TOKEN } from './harness.mjs';

let stack;
let browser;
let page;

before(async () => {
  stack = await startStack({ demoScript: join(REPO, 'demo', 'demo-script.yaml'), name: 'demo' });
  browser = await launchBrowser();
  page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
  page.setDefaultTimeout(20000);
});

after(async () => {
  await browser?.close();
  assert.equal(await stack?.stop(), 0, 'maestro serve (and its demo model) stop cleanly');
});

test('the UI says plainly that it is a demo model', async () => {
  await page.goto(stack.base);
  await page.getByText('Demo model — scripted answers, not a real LLM').waitFor();
  await page.getByLabel('API token').fill(TOKEN);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('demo-banner').waitFor();
  await screenshot(page, 'demo-banner');
});

test('a demo task: streamed text, tool approval, result', async () => {
  await page.getByRole('button', { name: 'New task' }).click();
  // A demo chip picks the chat piece the demo script answers for, whatever
  // piece was chosen before.
  const piece = page.getByRole('dialog', { name: 'New task' }).getByLabel('Piece', { exact: true });
  await piece.locator('option[value="coding"]').waitFor({ state: 'attached' });
  await piece.selectOption('coding');
  await page.getByRole('button', { name: 'Tool approval' }).click();
  assert.equal(await page.getByLabel('Instruction', { exact: true }).inputValue(), 'Demo: save a note about the meeting');
  assert.equal(await piece.inputValue(), 'chat', 'the demo chip selected the chat piece');
  await screenshot(page, 'demo-chip-chat');
  await page.getByRole('button', { name: 'Create task' }).click();
  const card = page.getByTestId('tool-request');
  await card.waitFor();
  assert.match(await card.innerText(), /NOTE\.md/);
  await page.getByTestId('feed').getByText('Writing files needs your approval', { exact: false }).waitFor();
  await screenshot(page, 'demo-approval');
  await card.getByRole('button', { name: 'Approve once' }).click();
  await page.getByTestId('feed').getByText('Saved the meeting note in NOTE.md.').waitFor();
  await page.locator('[data-testid="tool-card"][data-tool="WriteFile"]').waitFor();
  // The approval is one card (the park and its replay), done.
  const request = page.locator('[data-testid="tool-card"][data-tool="RequestTool"]');
  assert.equal(await request.count(), 1);
  assert.equal(await request.getAttribute('data-state'), 'ok');
  // The demo's markdown note is rendered (a heading, a list).
  await screenshot(page, 'demo-done');
});
