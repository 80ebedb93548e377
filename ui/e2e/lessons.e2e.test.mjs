// Issue 21 "Lessons" end to end: the Lessons page from the header, lessons
// made through the API listed per space (a configured space `docs` and the
// no-space tasks) with their scope, evidence and author; the space filter;
// the text and scope edited in place (checked through the API); one added
// with the form; one deleted after the confirm; an evidence link opening its
// task; no sideways scrolling at 390 px. Debian's Chromium against a real
// `maestro serve` + `maestro-fakellm` (e2e-script.yaml); a screenshot per step.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { apiCall, launchBrowser, screenshot, startStack, TOKEN, UI_DIR } from './harness.mjs';

let stack;
let browser;
let page;

before(async () => {
  stack = await startStack({
    script: join(UI_DIR, 'e2e', 'e2e-script.yaml'),
    name: 'lessons',
    config: (dataDir) => `spaces:\n  docs:\n    path: ${join(dataDir, 'space-docs')}\n    description: Team docs\n`,
  });
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

const post = (body) => apiCall(stack, '/api/local/lessons', { method: 'POST', body: JSON.stringify(body) });

test('lessons: listed per space, filtered, edited, added, deleted; evidence opens the task', async () => {
  // A finished task to point the evidence at.
  const task = await apiCall(stack, '/api/local/tasks', {
    method: 'POST',
    body: JSON.stringify({ instruction: 'e2e lessons evidence task', piece: 'chat' }),
  });
  assert.equal(task.status, 201, JSON.stringify(task.body));
  const taskId = task.body.task.id;

  const bad = await post({ space: 'nope', scope: 'space', lesson: 'x' });
  assert.equal(bad.status, 400);
  assert.equal(bad.body.error.field, 'space');

  const docs = await post({ space: 'docs', scope: 'space', lesson: 'LESSON-DOCS run the linter before committing', evidence: [taskId] });
  assert.equal(docs.status, 201, JSON.stringify(docs.body));
  const loose = await post({ space: '', scope: 'piece', piece: 'chat', lesson: 'LESSON-LOOSE answer in one paragraph' });
  assert.equal(loose.status, 201, JSON.stringify(loose.body));
  const docsId = docs.body.lesson.id;
  const looseId = loose.body.lesson.id;

  await page.getByRole('button', { name: 'Lessons', exact: true }).click();
  await page.waitForURL(/\/lessons$/);
  assert.equal(await page.getByRole('button', { name: 'Lessons', exact: true }).getAttribute('aria-current'), 'page');
  const lessonsPage = page.getByTestId('lessons-page');
  const docsGroup = page.getByRole('region', { name: 'Lessons of docs' });
  const looseGroup = page.getByRole('region', { name: 'Lessons of (no space)' });
  const docsCard = docsGroup.getByTestId('lesson').filter({ hasText: 'LESSON-DOCS' });
  const looseCard = looseGroup.getByTestId('lesson').filter({ hasText: 'LESSON-LOOSE' });
  await docsCard.waitFor();
  await looseCard.waitFor();
  assert.deepEqual(
    (await lessonsPage.getByTestId('lesson-group').locator('h3').allTextContents()).map((t) => t.trim()),
    ['docs', '(no space)'],
  );
  assert.equal((await docsCard.getByTestId('lesson-scope').textContent()).trim(), 'whole space');
  assert.equal((await looseCard.getByTestId('lesson-scope').textContent()).trim(), 'piece chat');
  await docsCard.getByText('a person').waitFor();
  await docsCard.getByRole('button', { name: `task ${taskId}` }).waitFor();
  await docsCard.locator('time').waitFor();
  await screenshot(page, 'listed');

  // The filter asks the server for one space.
  await page.getByLabel('Show lessons of').selectOption('docs');
  await looseGroup.waitFor({ state: 'detached' });
  await docsCard.waitFor();
  await page.getByLabel('Show lessons of').selectOption('');
  await docsGroup.waitFor({ state: 'detached' });
  await looseCard.waitFor();
  await page.getByLabel('Show lessons of').selectOption('*');
  await docsCard.waitFor();

  // Edit the text and the scope in place.
  await docsCard.getByRole('button', { name: 'Edit' }).click();
  const editForm = docsGroup.getByRole('form', { name: 'Edit the lesson' });
  await editForm.getByLabel('Lesson text').fill('LESSON-DOCS-EDITED run the linter and the tests before committing');
  await editForm.getByLabel('Scope').selectOption('piece');
  await editForm.getByLabel('Piece').selectOption('chat');
  await screenshot(page, 'editing');
  await editForm.getByRole('button', { name: 'Save' }).click();
  const edited = docsGroup.getByTestId('lesson').filter({ hasText: 'LESSON-DOCS-EDITED' });
  await edited.getByTestId('lesson-scope').getByText('piece chat').waitFor();
  await edited.getByTestId('lesson-edited').waitFor();
  const got = await apiCall(stack, `/api/local/lessons/${docsId}`);
  assert.equal(got.body.lesson.lesson, 'LESSON-DOCS-EDITED run the linter and the tests before committing');
  assert.equal(got.body.lesson.scope, 'piece');
  assert.equal(got.body.lesson.piece, 'chat');
  assert.deepEqual(got.body.lesson.evidence, [taskId], 'the evidence stays');
  assert.equal(got.body.lesson.space, 'docs');

  // Add one with the form.
  const form = page.getByRole('form', { name: 'Add lesson' });
  await form.getByLabel('Space').selectOption('docs');
  await form.getByLabel('Scope').selectOption('space');
  await form.getByLabel('Lesson', { exact: true }).fill('LESSON-FORM keep the changelog in step');
  await form.getByLabel(/^Evidence/).fill(taskId);
  await form.getByRole('button', { name: 'Add lesson' }).click();
  await docsGroup.getByTestId('lesson').filter({ hasText: 'LESSON-FORM' }).waitFor();
  assert.equal(await form.getByLabel('Lesson', { exact: true }).inputValue(), '', 'the form is cleared');
  const listed = await apiCall(stack, '/api/local/lessons?space=docs');
  const added = listed.body.lessons.find((l) => l.lesson === 'LESSON-FORM keep the changelog in step');
  assert.ok(added, JSON.stringify(listed.body));
  assert.equal(added.scope, 'space');
  assert.equal(added.source_task_id, '');
  assert.deepEqual(added.evidence, [taskId]);
  assert.equal(listed.body.lessons[0].id, added.id, 'newest first');
  await screenshot(page, 'added');

  // Delete: a dismissed confirm keeps it, an accepted one removes it.
  page.once('dialog', (d) => d.dismiss());
  await looseCard.getByRole('button', { name: 'Delete' }).click();
  await looseCard.waitFor();
  assert.equal((await apiCall(stack, `/api/local/lessons/${looseId}`)).status, 200);
  page.once('dialog', (d) => d.accept());
  await looseCard.getByRole('button', { name: 'Delete' }).click();
  await looseGroup.waitFor({ state: 'detached' });
  assert.equal((await apiCall(stack, `/api/local/lessons/${looseId}`)).status, 404);
  await screenshot(page, 'deleted');

  // An evidence link opens its task.
  await edited.getByRole('button', { name: `task ${taskId}` }).click();
  await page.waitForURL(new RegExp(`/tasks/${taskId}$`));
  await page.getByTestId('feed').getByText('e2e lessons evidence task').first().waitFor();
  await page.goBack();
  await page.waitForURL(/\/lessons$/);
  await edited.waitFor();
});

test('lessons: phone width does not scroll sideways', async () => {
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(`${stack.base}/lessons`);
  const card = page.getByTestId('lesson').filter({ hasText: 'LESSON-DOCS-EDITED' });
  await card.waitFor();
  await card.getByRole('button', { name: 'Edit' }).click();
  await card.getByLabel('Scope').waitFor();
  const widths = await page.evaluate(() => {
    const el = document.querySelector('[data-testid="lessons-page"]');
    return { doc: document.documentElement.scrollWidth, view: window.innerWidth, page: el.scrollWidth, pageBox: el.clientWidth };
  });
  assert.ok(widths.doc <= widths.view, `the document is ${widths.doc} px wide at ${widths.view} px`);
  assert.ok(widths.page <= widths.pageBox, `the page scrolls sideways: ${widths.page} > ${widths.pageBox}`);
  await screenshot(page, 'phone');
  await card.getByRole('button', { name: 'Cancel' }).click();
});
