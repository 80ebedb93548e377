// Issue 45 item 6 "Web Push" in Chromium: the bell's "Notify me on this
// device" registers the service worker /sw.js, subscribes with the server's
// VAPID key and POSTs the subscription; a task that parks on ASK makes
// `maestro serve` push to the subscription's endpoint — a push-service
// stand-in here on 127.0.0.1 (admitted by `egress: allow:`) — and the body
// decrypts with the subscription's private key by npm http_ece (tests/push,
// pinned), the VAPID JWT verifying with the advertised key. The message,
// delivered to the service worker (DevTools' ServiceWorker.deliverPushMessage,
// what the browser does after decrypting), shows a notification naming the
// task; "Stop notifying this device" deletes the server's copy.
//
// Headless Chromium cannot reach a real push service here (no GCM/FCM), so
// an init script replaces PushManager.prototype.subscribe/getSubscription
// with a subscription to the local stand-in whose keys this test made (a
// real P-256 key pair and auth secret): everything after the browser's
// subscribe call — the UI's flow, maestro's encryption, VAPID and delivery —
// is real.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { apiCall, launchBrowser, REPO, screenshot, startStack, TOKEN, UI_DIR } from './harness.mjs';

const ece = createRequire(join(REPO, 'tests', 'push', 'package.json'))('http_ece');

let stack;
let browser;
let context;
let page;
let standin;
const received = [];

const b64u = (buf) => Buffer.from(buf).toString('base64url');

before(async () => {
  standin = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      received.push({ url: req.url, headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(201).end();
    });
  });
  await new Promise((r) => standin.listen(0, '127.0.0.1', r));
  stack = await startStack({
    script: join(UI_DIR, 'e2e', 'e2e-script.yaml'),
    name: 'push',
    config: () => 'egress:\n  allow: [127.0.0.1]\npush:\n  subject: mailto:e2e@example.com\n',
  });
  browser = await launchBrowser();
  context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  await context.grantPermissions(['notifications'], { origin: stack.base });
  page = await context.newPage();
  page.setDefaultTimeout(20000);
});

after(async () => {
  await browser?.close();
  const code = await stack?.stop();
  await new Promise((r) => standin?.close(r));
  assert.equal(code, 0, 'maestro serve exits cleanly on SIGTERM');
});

async function waitFor(pred, what, ms = 20000) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const v = await pred();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

test('push: the bell subscribes this device, maestro pushes, the message decrypts and shows', async () => {
  // The browser's keys, as its push service would hold them.
  const ua = crypto.createECDH('prime256v1');
  ua.generateKeys();
  const keys = { p256dh: b64u(ua.getPublicKey()), auth: b64u(crypto.randomBytes(16)) };
  const endpoint = `http://127.0.0.1:${standin.address().port}/push/e2e-device`;
  await context.addInitScript(({ endpoint, keys }) => {
    if (!self.PushManager) return;
    const bytes = (s) =>
      Uint8Array.from(atob(s.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (s.length % 4)) % 4)), (c) =>
        c.charCodeAt(0),
      ).buffer;
    let current = null;
    PushManager.prototype.subscribe = async function (options) {
      const key = new Uint8Array(options.applicationServerKey);
      window.__pushServerKey = btoa(String.fromCharCode(...key)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
      current = {
        endpoint,
        expirationTime: null,
        options: { userVisibleOnly: options.userVisibleOnly, applicationServerKey: key.buffer },
        getKey: (name) => bytes(name === 'p256dh' ? keys.p256dh : keys.auth),
        toJSON: () => ({ endpoint, expirationTime: null, keys }),
        unsubscribe: async () => {
          current = null;
          return true;
        },
      };
      return current;
    };
    PushManager.prototype.getSubscription = async function () {
      return current;
    };
  }, { endpoint, keys });

  await page.goto(stack.base);
  await page.getByLabel('API token').fill(TOKEN);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'New task' }).waitFor();

  const key = await apiCall(stack, '/api/local/push/key');
  assert.equal(key.status, 200, JSON.stringify(key.body));

  await page.getByRole('button', { name: /^Notifications \(/ }).click();
  await page.getByRole('button', { name: 'Notify me on this device' }).click();
  await page.getByRole('button', { name: 'Stop notifying this device' }).waitFor();
  await screenshot(page, 'subscribed');

  // The service worker is registered and active at the app's root.
  const sw = await page.evaluate(async () => {
    const reg = await navigator.serviceWorker.ready;
    return { script: reg.active?.scriptURL ?? '', scope: reg.scope };
  });
  assert.equal(sw.script, `${stack.base}/sw.js`);
  assert.equal(sw.scope, `${stack.base}/`);
  assert.equal(await page.evaluate(() => window.__pushServerKey), key.body.public_key, 'subscribed with the server key');
  const subs = await apiCall(stack, '/api/local/push/subscriptions');
  assert.deepEqual(
    subs.body.subscriptions.map((s) => s.endpoint),
    [endpoint],
    'the bell POSTed the subscription',
  );

  // A task that asks: maestro pushes "needs you" to the stand-in.
  const task = await apiCall(stack, '/api/local/tasks', {
    method: 'POST',
    body: JSON.stringify({ instruction: 'e2e-ask push me when you need me', piece: 'chat' }),
  });
  assert.equal(task.status, 201, JSON.stringify(task.body));
  const taskId = task.body.task.id;
  const msg = await waitFor(() => received.find((r) => r.url === '/push/e2e-device'), 'the push');
  assert.equal(msg.headers['content-encoding'], 'aes128gcm');
  assert.equal(msg.headers.urgency, 'high');
  const plain = ece.decrypt(msg.body, { version: 'aes128gcm', privateKey: ua, authSecret: Buffer.from(keys.auth, 'base64url') });
  const notice = JSON.parse(plain.toString('utf8'));
  assert.equal(notice.task_id, taskId);
  assert.equal(notice.outcome, 'needs_you');
  assert.equal(notice.url, `/tasks/${taskId}`);
  const vapid = /^vapid t=([^,]+), k=(.+)$/.exec(msg.headers.authorization);
  assert.ok(vapid, msg.headers.authorization);
  assert.equal(vapid[2], key.body.public_key);
  const [h, c, s] = vapid[1].split('.');
  const point = Buffer.from(key.body.public_key, 'base64url');
  const pub = crypto.createPublicKey({
    key: { kty: 'EC', crv: 'P-256', x: b64u(point.subarray(1, 33)), y: b64u(point.subarray(33)) },
    format: 'jwk',
  });
  assert.ok(
    crypto.verify('sha256', Buffer.from(`${h}.${c}`), { key: pub, dsaEncoding: 'ieee-p1363' }, Buffer.from(s, 'base64url')),
    'the VAPID JWT verifies with the advertised key',
  );
  assert.equal(JSON.parse(Buffer.from(c, 'base64url')).aud, `http://127.0.0.1:${standin.address().port}`);

  // The decrypted message delivered to the service worker shows a
  // notification naming the task that opens it.
  const cdp = await context.newCDPSession(page);
  const registered = new Promise((resolve) => {
    cdp.on('ServiceWorker.workerRegistrationUpdated', ({ registrations }) => {
      const r = registrations.find((x) => x.scopeURL === `${stack.base}/` && !x.isDeleted);
      if (r) resolve(r.registrationId);
    });
  });
  await cdp.send('ServiceWorker.enable');
  const registrationId = await registered;
  // A message delivered while the worker is still starting can be dropped
  // (seen on a cold Chromium): deliver again until it shows. The notice's
  // tag is per task, so a repeat replaces the notification, never adds one.
  let shown = null;
  for (let attempt = 0; attempt < 5 && !shown; ++attempt) {
    await cdp.send('ServiceWorker.deliverPushMessage', { origin: stack.base, registrationId, data: plain.toString('utf8') });
    shown = await waitFor(
      () =>
        page.evaluate(async () => {
          const reg = await navigator.serviceWorker.ready;
          return (await reg.getNotifications()).map((n) => ({ title: n.title, body: n.body, url: n.data?.url }));
        }).then((l) => (l.length ? l : null)),
      'the notification',
      4000,
    ).catch(() => null);
  }
  assert.ok(shown, 'the service worker showed no notification after 5 deliveries');
  assert.deepEqual(shown, [{ title: 'e2e-ask push me when you need me', body: 'needs you', url: `/tasks/${taskId}` }]);

  // Stop: the server forgets this device.
  await page.getByRole('button', { name: 'Stop notifying this device' }).click();
  // The button shows (disabled) while the toggle is busy: wait until it has
  // finished (the server's DELETE answered and the browser unsubscribed).
  await page.locator('[data-testid="push-toggle"][data-state="off"]').waitFor();
  await page.getByRole('button', { name: 'Notify me on this device' }).waitFor();
  const gone = await apiCall(stack, '/api/local/push/subscriptions');
  assert.deepEqual(gone.body.subscriptions, []);
  await screenshot(page, 'unsubscribed');
});
