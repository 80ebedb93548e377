// "Notify me on this device": Web Push from the bell (issue 45 item 6).
// Subscribes this browser's PushManager with maestro's VAPID public key
// (GET /api/local/push/key) through the service worker /sw.js (shows the
// message, opens the task on a click) and registers the subscription with
// the server (POST /api/local/push/subscriptions, its toJSON() as is); the
// server then pushes this user's "needs you", finished and failed notices
// here. "Stop notifying this device" deletes the server's copy (found by
// endpoint among the user's own) and unsubscribes the browser. A browser
// without service workers or Push, a refused permission, or a server with
// push off is said in words; nothing else changes.
import { useCallback, useEffect, useState } from 'react';
import { api, ApiError } from '../api';

type State = 'checking' | 'unsupported' | 'off' | 'on' | 'busy' | 'denied' | 'unavailable';

// The VAPID key as PushManager.subscribe takes it (base64url -> bytes).
export function base64UrlBytes(text: string): Uint8Array {
  const b64 = text.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (text.length % 4)) % 4);
  const raw = atob(b64);
  const out = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) out[i] = raw.charCodeAt(i);
  return out;
}

function sameKey(a: ArrayBuffer | null | undefined, b: Uint8Array): boolean {
  if (!a) return false;
  const x = new Uint8Array(a);
  return x.length === b.length && x.every((v, i) => v === b[i]);
}

const supported = () => 'serviceWorker' in navigator && 'PushManager' in window && 'Notification' in window;

async function registration(): Promise<ServiceWorkerRegistration> {
  await navigator.serviceWorker.register('/sw.js');
  return navigator.serviceWorker.ready;
}

export function PushToggle() {
  const [state, setState] = useState<State>('checking');
  const [error, setError] = useState('');

  useEffect(() => {
    if (!supported()) {
      setState('unsupported');
      return;
    }
    let alive = true;
    (async () => {
      try {
        const reg = await registration();
        const sub = await reg.pushManager.getSubscription();
        if (!alive) return;
        setState(sub ? 'on' : Notification.permission === 'denied' ? 'denied' : 'off');
      } catch {
        if (alive) setState('unsupported');
      }
    })();
    return () => {
      alive = false;
    };
  }, []);

  const subscribe = useCallback(async () => {
    setState('busy');
    setError('');
    try {
      if ((await Notification.requestPermission()) !== 'granted') {
        setState('denied');
        return;
      }
      const { public_key } = await api<{ public_key: string }>('/api/local/push/key');
      const key = base64UrlBytes(public_key);
      const reg = await registration();
      let sub = await reg.pushManager.getSubscription();
      // Made with another server key (the key file was replaced): start over.
      if (sub && !sameKey(sub.options?.applicationServerKey, key)) {
        await sub.unsubscribe();
        sub = null;
      }
      sub ??= await reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key });
      await api('/api/local/push/subscriptions', { method: 'POST', body: JSON.stringify(sub.toJSON()) });
      setState('on');
    } catch (e) {
      if (e instanceof ApiError && e.status === 503) {
        setState('unavailable');
        return;
      }
      setError(e instanceof Error ? e.message : String(e));
      setState('off');
    }
  }, []);

  const unsubscribe = useCallback(async () => {
    setState('busy');
    setError('');
    try {
      const reg = await registration();
      const sub = await reg.pushManager.getSubscription();
      if (sub) {
        const { subscriptions } = await api<{ subscriptions: { id: string; endpoint: string }[] }>(
          '/api/local/push/subscriptions',
        );
        for (const s of subscriptions.filter((s) => s.endpoint === sub.endpoint)) {
          await api(`/api/local/push/subscriptions/${encodeURIComponent(s.id)}`, { method: 'DELETE' });
        }
        await sub.unsubscribe();
      }
      setState('off');
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
      setState('on');
    }
  }, []);

  if (state === 'checking') return null;
  return (
    <div className="push-toggle" data-testid="push-toggle" data-state={state}>
      {state === 'unsupported' && <small className="muted">This browser cannot show push notifications.</small>}
      {state === 'unavailable' && <small className="muted">Push notifications are off on this server.</small>}
      {state === 'denied' && <small className="muted">Notifications are blocked for this site in the browser.</small>}
      {(state === 'off' || state === 'busy') && (
        <button className="ghost small" disabled={state === 'busy'} onClick={() => void subscribe()}>
          Notify me on this device
        </button>
      )}
      {state === 'on' && (
        <button className="ghost small" onClick={() => void unsubscribe()}>
          Stop notifying this device
        </button>
      )}
      {error && (
        <small className="muted" role="alert">
          {' '}
          {error}
        </small>
      )}
    </div>
  );
}
