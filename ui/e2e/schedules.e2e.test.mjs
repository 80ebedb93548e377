// Issue 20 "Schedules" end to end: the Schedules page from the header, a
// schedule created with the form (a bad cron is refused naming the field),
// its next fire, pause and resume, run now, and its history opening the task
// it started. Debian's Chromium against a real `maestro serve` +
// `maestro-fakellm` (e2e-script.yaml); a screenshot per step.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { apiCall, launchBrowser, screenshot, startStack, TOKEN, UI_DIR } from './harness.mjs';

let stack;
let browser;
let page;

before(async () => {
  stack = await startStack({ script: join(UI_DIR, 'e2e', 'e2e-script.yaml'), name: 'schedules' });
  browser = await launchBrowser();
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
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

test('schedules: create, next fire, pause/resume, run now, history opens the task', async () => {
  await page.getByRole('button', { name: 'Schedules' }).click();
  await page.waitForURL(/\/schedules$/);
  await page.getByTestId('schedules-page').getByText('No schedules yet.').waitFor();

  await page.getByLabel('Name').fill('e2e nightly');
  await page.getByLabel(/^Cron/).fill('0 25 * * *');
  await page.getByLabel('Time zone (IANA)').fill('Europe/Berlin');
  await page.getByLabel('Instruction').fill('e2e schedule: say hello');
  await page.getByRole('button', { name: 'Create schedule' }).click();
  await page.getByRole('alert').getByText('cron hour: 25 is out of range 0-23').waitFor();
  await screenshot(page, 'bad-cron');

  await page.getByLabel(/^Cron/).fill('30 2 * * *');
  await page.getByRole('button', { name: 'Create schedule' }).click();
  const row = page.getByTestId('schedule-row').filter({ hasText: 'e2e nightly' });
  await row.waitFor();
  const listed = await apiCall(stack, '/api/local/schedules');
  assert.equal(listed.body.schedules.length, 1);
  const s = listed.body.schedules[0];
  assert.equal(s.timezone, 'Europe/Berlin');
  assert.equal(s.next_fires.length, 5);
  assert.equal(
    (await row.getByTestId('next-fire').textContent()).trim(),
    await page.evaluate((ms) => new Date(ms).toLocaleString(), s.next_fires[0]),
  );
  await screenshot(page, 'created');

  await row.getByRole('button', { name: 'Pause' }).click();
  await row.getByTestId('next-fire').getByText('paused').waitFor();
  assert.equal((await apiCall(stack, `/api/local/schedules/${s.id}`)).body.schedule.enabled, false);
  await row.getByRole('button', { name: 'Resume' }).click();
  await row.getByRole('button', { name: 'Pause' }).waitFor();

  await row.getByRole('button', { name: 'Run now' }).click();
  const history = page.getByTestId('schedule-history');
  await history.getByText('(run now)').waitFor();
  await screenshot(page, 'history');
  await history.getByRole('button', { name: 'e2e nightly' }).click();
  await page.waitForURL(/\/tasks\//);
  await page.getByTestId('feed').getByText('e2e schedule: say hello').first().waitFor();
  await screenshot(page, 'task-opened');
});
