// maestro's service worker (issue 45 item 6): shows a Web Push message as a
// notification and opens its task when the notification is clicked.
//
// The browser decrypts each message (RFC 8291) before `push` fires; the
// payload is maestro's small notice (api/push_notice.h):
//   {task_id, task_name, outcome, summary, url: "/tasks/<id>", event_id}
// It is shown as plain text (a notification renders no markup), and only a
// same-origin /tasks/ path is ever opened: a payload cannot send the person
// elsewhere. Registered by the bell's "Notify me on this device"
// (src/components/PushToggle.tsx); served from / so its scope is the app.
/* eslint-env serviceworker */

self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));

// The task path a notice may open, else the app's root.
function taskPath(notice) {
  const url = typeof notice.url === 'string' ? notice.url : '';
  return /^\/tasks\/[A-Za-z0-9_%-]+$/.test(url) ? url : '/';
}

function text(value, fallback, max) {
  const s = typeof value === 'string' && value.trim() ? value.trim() : fallback;
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

self.addEventListener('push', (event) => {
  let notice = {};
  try {
    notice = event.data ? event.data.json() : {};
  } catch {
    notice = {};
  }
  if (notice === null || typeof notice !== 'object') notice = {};
  const title = text(notice.task_name, 'maestro', 120);
  const body = text(notice.summary, 'a task changed', 200);
  const options = {
    body,
    data: { url: taskPath(notice) },
    // One notification per task: a newer notice replaces the older one.
    tag: typeof notice.task_id === 'string' ? `maestro-task-${notice.task_id}` : undefined,
    renotify: notice.outcome === 'needs_you',
    requireInteraction: notice.outcome === 'needs_you',
  };
  event.waitUntil(self.registration.showNotification(title, options));
});

self.addEventListener('notificationclick', (event) => {
  event.notification.close();
  const path = taskPath(event.notification.data || {});
  const target = new URL(path, self.location.origin).href;
  event.waitUntil(
    (async () => {
      const windows = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
      for (const w of windows) {
        if (new URL(w.url).origin !== self.location.origin) continue;
        if ('navigate' in w) await w.navigate(target).catch(() => {});
        if ('focus' in w) return w.focus();
      }
      return self.clients.openWindow(target);
    })(),
  );
});
