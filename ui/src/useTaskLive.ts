// useTaskLive: everything the chat pane shows about one task, kept live.
//
// Sources: GET task (jobs, pending requests) and comments over REST; the
// task's durable events over SSE (`/tasks/:id/events`, resumed with
// Last-Event-ID); each job's live deltas over SSE (`/jobs/:id/stream`, also
// resumed by seq). Every durable event triggers a debounced REST refresh, so
// the REST state never lags the events. While the event stream is down the
// hook polls the events as JSON (`?after=`) every 2 s instead — REST polling
// is the fallback, nothing is missed either way.
import { useCallback, useEffect, useRef, useState } from 'react';
import { Api, ApiError, api } from './api';
import { openSse, type SseState } from './sse';
import type { Comment, Delta, LedgerCall, TaskDetail, TaskEvent } from './types';

export interface TaskLive {
  detail: TaskDetail | null;
  comments: Comment[];
  events: TaskEvent[];
  deltas: Record<string, Delta[]>;
  // The task's tool ledger (every job's calls, also after a restart); empty
  // on a server without the route.
  ledger: LedgerCall[];
  // The task does not exist (or is not visible): 404 on its id.
  notFound: boolean;
  connection: SseState | 'polling';
  error: string;
  refresh: () => void;
}

const MAX_STREAMED_JOBS = 6;

export function useTaskLive(taskId: string): TaskLive {
  const [detail, setDetail] = useState<TaskDetail | null>(null);
  const [comments, setComments] = useState<Comment[]>([]);
  const [events, setEvents] = useState<TaskEvent[]>([]);
  const [deltas, setDeltas] = useState<Record<string, Delta[]>>({});
  const [connection, setConnection] = useState<SseState | 'polling'>('connecting');
  const [error, setError] = useState('');
  const [ledger, setLedger] = useState<LedgerCall[]>([]);
  const [notFound, setNotFound] = useState(false);
  const ledgerMissing = useRef(false);
  const detailRef = useRef<TaskDetail | null>(null);
  detailRef.current = detail;
  const lastEventId = useRef('');
  const deltasRef = useRef<Record<string, Delta[]>>({});
  deltasRef.current = deltas;
  const timer = useRef<number | undefined>(undefined);

  const load = useCallback(async () => {
    try {
      const [d, c] = await Promise.all([Api.task(taskId), Api.comments(taskId)]);
      setDetail(d);
      setComments(c.comments);
      setError('');
      setNotFound(false);
    } catch (e) {
      // A malformed id in the address is as missing as an unknown one.
      if (e instanceof ApiError && (e.status === 404 || (e.status === 400 && !detailRef.current))) setNotFound(true);
      else setError(String((e as Error).message));
      return;
    }
    if (ledgerMissing.current) return;
    try {
      setLedger(await Api.toolCalls(taskId));
    } catch (e) {
      // A server without the ledger route: the deltas alone drive the cards.
      if (e instanceof ApiError && e.status === 404) ledgerMissing.current = true;
    }
  }, [taskId]);

  const refresh = useCallback(() => {
    window.clearTimeout(timer.current);
    timer.current = window.setTimeout(() => void load(), 120);
  }, [load]);

  const addEvents = useCallback(
    (list: TaskEvent[]) => {
      if (!list.length) return;
      setEvents((prev) => {
        const seen = new Set(prev.map((e) => e.id));
        const fresh = list.filter((e) => !seen.has(e.id));
        return fresh.length ? [...prev, ...fresh] : prev;
      });
      lastEventId.current = list[list.length - 1].id;
      refresh();
    },
    [refresh],
  );

  // Reset when the task changes.
  useEffect(() => {
    setDetail(null);
    setComments([]);
    setEvents([]);
    setDeltas({});
    setLedger([]);
    setNotFound(false);
    ledgerMissing.current = false;
    lastEventId.current = '';
    void load();
  }, [taskId, load]);

  // Durable events: SSE, with polling while it is down.
  useEffect(() => {
    if (notFound) return;
    let poll: number | undefined;
    const stopPolling = () => {
      window.clearInterval(poll);
      poll = undefined;
    };
    const startPolling = () => {
      if (poll !== undefined) return;
      setConnection('polling');
      poll = window.setInterval(async () => {
        try {
          const after = lastEventId.current ? `?after=${lastEventId.current}` : '';
          const r = await api<{ events: TaskEvent[] }>(`/api/local/tasks/${taskId}/events${after}`);
          addEvents(r.events);
        } catch {
          /* still down: the next tick retries */
        }
      }, 2000);
    };
    const stop = openSse({
      url: `/api/local/tasks/${taskId}/events`,
      lastEventId: lastEventId.current,
      onFrame: (f) => {
        if (!f.data) return;
        try {
          addEvents([JSON.parse(f.data) as TaskEvent]);
        } catch {
          /* not an event frame */
        }
      },
      onState: (s, failures) => {
        if (s === 'open') {
          stopPolling();
          setConnection('open');
        } else if (s === 'down' && failures >= 2) startPolling();
        else if (poll === undefined) setConnection(s);
      },
    });
    return () => {
      stop();
      stopPolling();
    };
  }, [taskId, addEvents, notFound]);

  // Live deltas of the newest jobs.
  const jobIds = (detail?.jobs ?? []).slice(-MAX_STREAMED_JOBS).map((j) => j.id).join(',');
  useEffect(() => {
    if (!jobIds) return;
    const stops = jobIds.split(',').map((jobId) =>
      openSse({
        url: `/api/local/jobs/${jobId}/stream`,
        // Resume after the deltas already shown (a new job joined the list).
        lastEventId: lastSeq(deltasRef.current[jobId]),
        onFrame: (f) => {
          if (f.event === 'end') {
            refresh();
            return;
          }
          if (f.event !== 'delta' || !f.data) return;
          const seq = Number(f.id);
          let d: Delta;
          try {
            d = { ...(JSON.parse(f.data) as Omit<Delta, 'seq'>), seq } as Delta;
          } catch {
            return;
          }
          setDeltas((prev) => {
            const list = prev[jobId] ?? [];
            if (list.length && list[list.length - 1].seq >= seq) return prev;
            return { ...prev, [jobId]: [...list, d] };
          });
        },
        isFinal: (f) => f.event === 'end',
      }),
    );
    return () => stops.forEach((s) => s());
  }, [jobIds, refresh]);

  return { detail, comments, events, deltas, ledger, notFound, connection, error, refresh };
}

function lastSeq(list: Delta[] | undefined): string {
  return list && list.length ? String(list[list.length - 1].seq) : '';
}
