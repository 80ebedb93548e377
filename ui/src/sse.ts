// Server-sent events over fetch(), because EventSource cannot send the
// Authorization header (a session sign-in needs none: its cookie goes along). Each frame's `id:` is remembered; after a dropped
// connection the stream is reopened with `Last-Event-ID` after a backoff
// (0.5 s doubling to 8 s), so nothing is lost or duplicated. `onState` lets
// the caller show the connection and switch to REST polling while it is down.
import { authHeaders } from './api';

export interface SseFrame {
  id: string;
  event: string;
  data: string;
}

export type SseState = 'connecting' | 'open' | 'down' | 'ended';

export interface SseOptions {
  url: string;
  lastEventId?: string;
  onFrame: (f: SseFrame) => void;
  onState?: (s: SseState, failures: number) => void;
  // Returns true when the stream is complete and must not reconnect (e.g. `end`).
  isFinal?: (f: SseFrame) => boolean;
}

// Starts the stream; call the returned function to stop it.
export function openSse(opts: SseOptions): () => void {
  const ctrl = new AbortController();
  let lastId = opts.lastEventId ?? '';
  let failures = 0;
  let stopped = false;

  const run = async () => {
    while (!stopped) {
      opts.onState?.('connecting', failures);
      let ended = false;
      try {
        const headers = authHeaders();
        headers.set('Accept', 'text/event-stream');
        if (lastId) headers.set('Last-Event-ID', lastId);
        const res = await fetch(opts.url, { headers, signal: ctrl.signal, cache: 'no-store', credentials: 'same-origin' });
        if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}`);
        failures = 0;
        opts.onState?.('open', 0);
        ended = await readFrames(res.body, (f) => {
          if (f.id) lastId = f.id;
          opts.onFrame(f);
          return opts.isFinal?.(f) ?? false;
        });
      } catch {
        if (stopped) return;
      }
      if (ended) {
        opts.onState?.('ended', 0);
        return;
      }
      failures++;
      opts.onState?.('down', failures);
      await sleep(Math.min(8000, 500 * 2 ** Math.min(failures - 1, 4)), ctrl.signal);
    }
  };
  void run();
  return () => {
    stopped = true;
    ctrl.abort();
  };
}

// Parses the text/event-stream body; returns true when a final frame came.
async function readFrames(body: ReadableStream<Uint8Array>, emit: (f: SseFrame) => boolean): Promise<boolean> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  let frame: SseFrame = { id: '', event: 'message', data: '' };
  let hasData = false;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return false;
    buf += decoder.decode(value, { stream: true });
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl).replace(/\r$/, '');
      buf = buf.slice(nl + 1);
      if (line === '') {
        if (hasData || frame.event !== 'message') {
          if (emit(frame)) {
            await reader.cancel().catch(() => {});
            return true;
          }
        }
        frame = { id: '', event: 'message', data: '' };
        hasData = false;
        continue;
      }
      if (line.startsWith(':')) continue; // keep-alive comment
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const val = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'id') frame.id = val;
      else if (field === 'event') frame.event = val;
      else if (field === 'data') {
        frame.data = hasData ? `${frame.data}\n${val}` : val;
        hasData = true;
      }
    }
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(t);
      resolve();
    });
  });
}
