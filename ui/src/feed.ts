// Builds the chat feed (ChatMessageFeed's items) from what useTaskLive holds:
// per job, in job order — the person's comments for that job, then the live
// stream (assistant text, tool-call cards, movement transitions, retries,
// interjections where they were delivered), then the agent's closing comment
// (result / question / note) and a status line for parks, failures and
// cancels. Comments are the durable record; deltas add what happened in
// between while the server still buffers them.
import { TERMINAL, type Comment, type Delta, type Job, type LedgerCall, type TaskEvent } from './types';

export interface ToolCard {
  id: string;
  name: string;
  args: string;
  result?: string;
  isError?: boolean;
  startedAt?: number;
  finishedAt?: number;
  // No result and the job is not running: the call parked the job (an
  // approval, a question) or the job stopped before it finished.
  stalled?: boolean;
  // The call parked the job (a request awaiting the person): its result so
  // far is "request created", the real one comes when the job resumes.
  waiting?: boolean;
  // A parked call that was replayed on resume: the park's result.
  parkNote?: string;
  // The ledger's duration (when the deltas' stamps are gone).
  durationMs?: number;
  // The ledger marked the call reconciled (interrupted by a restart).
  reconciled?: boolean;
  children: FeedItem[]; // a delegate's nested stream
}

// Tools whose call parks the job until a person decides.
const PARKING_TOOLS = new Set(['RequestTool', 'RequestPackage', 'SpinOffTask']);

export type FeedItem =
  | { kind: 'comment'; key: string; comment: Comment; delivery?: Delivery }
  | { kind: 'assistant'; key: string; text: string; reasoning: string; live: boolean }
  | { kind: 'tool'; key: string; card: ToolCard }
  | { kind: 'movement'; key: string; movement: string }
  | { kind: 'job'; key: string; job: Job; index: number }
  | { kind: 'notice'; key: string; tone: 'info' | 'warn' | 'error'; text: string };

// Whether a person's comment has reached the agent: "delivered" once the
// server set delivered_at (it reached an LLM prompt), "pending" while the task
// is still active (the next step will read it). The instruction needs no such
// line (nor a Continue's handoff note), and a comment on a task that has
// ended says nothing.
export type Delivery = 'delivered' | 'pending';

const PERSON_KINDS = new Set(['instruction', 'reply', 'answer', 'message', 'interjection', 'handoff']);

export function isPersonComment(c: Comment): boolean {
  return c.author !== 'agent' && PERSON_KINDS.has(c.kind);
}

// Folds one job's deltas into feed items.
export function foldDeltas(
  jobId: string,
  deltas: Delta[],
  comments: Map<string, Comment>,
  live: boolean,
  parked = false,
): FeedItem[] {
  const items: FeedItem[] = [];
  const cards = new Map<string, ToolCard>();
  const byIndex = new Map<string, ToolCard>(); // `${parent}#${index}`
  let text: Extract<FeedItem, { kind: 'assistant' }> | null = null;
  let lastMovement = '';
  const all: ToolCard[] = [];
  const key = (d: Delta) => `${jobId}:${d.seq}`;
  // A delegate sub-agent's deltas carry `delegate: {call_id, depth}` (the
  // parent's delegate call); they nest under that call's card. Call ids are
  // scoped by it because a sub-agent's ids may repeat the parent's.
  const parentOf = (d: Delta): string => {
    const tag = d.delegate as { call_id?: string } | undefined;
    return String(tag?.call_id ?? d.parent_call_id ?? d.delegate_call_id ?? '');
  };
  const scoped = (d: Delta, id: string) => (id ? `${parentOf(d)}/${id}` : '');
  const target = (d: Delta): FeedItem[] => {
    const parent = parentOf(d);
    if (!parent) return items;
    for (const [k, card] of cards) if (k.endsWith(`/${parent}`)) return card.children;
    return items;
  };
  // Cards answered before the latest movement start: a parked call the
  // engine replays when the job resumes comes again with the same id and is
  // the same logical call (one card).
  const resumable = new Map<string, ToolCard>();
  // Park calls answered before a resume: the model's re-issue of the same
  // request after it (a new call id, the same tool and arguments) folds in.
  const parkedBefore = new Set<ToolCard>();
  let textOwner = '';
  for (const d of deltas) {
    // Text continues only within the same conversation (parent or one delegate).
    if (parentOf(d) !== textOwner) {
      text = null;
      textOwner = parentOf(d);
    }
    switch (d.type) {
      case 'text':
      case 'reasoning': {
        if (!text) {
          text = { kind: 'assistant', key: key(d), text: '', reasoning: '', live: false };
          target(d).push(text);
        }
        if (d.type === 'text') text.text += String(d.text ?? '');
        else text.reasoning += String(d.text ?? '');
        break;
      }
      case 'tool_call': {
        const index = Number(d.index ?? 0);
        const id = scoped(d, String(d.id ?? ''));
        let card = (id && cards.get(id)) || (!id ? byIndex.get(`${parentOf(d)}#${index}`) : undefined);
        // An id seen before whose call already has its result is a new call
        // (scripted servers reuse ids).
        if (card && card.result !== undefined) card = undefined;
        const replayed = !card && id ? resumable.get(id) : undefined;
        if (replayed && (!d.name || String(d.name) === replayed.name)) {
          resumable.delete(id);
          replayed.parkNote = replayed.result;
          replayed.result = undefined;
          replayed.isError = false;
          replayed.args = '';
          replayed.finishedAt = undefined;
          cards.set(id, replayed);
          byIndex.set(`${parentOf(d)}#${index}`, replayed);
          card = replayed;
        }
        if (!card) {
          card = { id: id || `${jobId}-${index}-${d.seq}`, name: '', args: '', children: [], startedAt: d.at as number | undefined };
          if (id) cards.set(id, card);
          byIndex.set(`${parentOf(d)}#${index}`, card);
          all.push(card);
          target(d).push({ kind: 'tool', key: key(d), card });
        }
        if (d.name) card.name = String(d.name);
        card.args += String(d.arguments ?? '');
        text = null;
        break;
      }
      case 'tool_result': {
        const card = cards.get(scoped(d, String(d.id ?? '')));
        if (card) {
          card.result = String(d.content ?? '');
          card.isError = Boolean(d.is_error);
          card.finishedAt = d.at as number | undefined;
        }
        text = null;
        byIndex.clear();
        break;
      }
      case 'movement': {
        // A delegate's own (single) movement is no divider of the job, and
        // must not reset the cards its deltas nest under.
        if (parentOf(d)) break;
        // Emitted at every movement start, also when a parked job resumes
        // the same movement: a divider only when the movement changes.
        const movement = String(d.movement ?? '');
        if (movement !== lastMovement) items.push({ kind: 'movement', key: key(d), movement });
        lastMovement = movement;
        text = null;
        byIndex.clear();
        resumable.clear();
        for (const [id, c] of cards) if (c.result !== undefined) resumable.set(id, c);
        for (const c of all) if (c.result !== undefined && PARKING_TOOLS.has(c.name)) parkedBefore.add(c);
        cards.clear();
        break;
      }
      case 'llm_retry':
        target(d).push({
          kind: 'notice', key: key(d), tone: 'warn',
          text: `Model call failed (${String(d.error ?? 'error')}); retry ${String(d.attempt ?? '')} in ${Math.round(Number(d.delay_ms ?? 0) / 100) / 10} s`,
        });
        text = null; // the partial answer is discarded by the server
        break;
      case 'policy': {
        // An Auto Prompter firing (issue 21): rule id, tool, decision and
        // the argument hash only, never the raw arguments.
        const line = policyNotice(d);
        if (line) target(d).push({ kind: 'notice', key: key(d), ...line });
        break;
      }
      case 'interjection': {
        const c = comments.get(String(d.comment_id ?? ''));
        if (c) {
          items.push({ kind: 'comment', key: key(d), comment: c });
          comments.delete(c.id);
        }
        text = null;
        byIndex.clear();
        break;
      }
      default:
        break;
    }
  }
  if (live && text) text.live = true;
  const folded = foldReissues(items, parkedBefore);
  if (folded !== items) items.splice(0, items.length, ...folded);
  if (!live) for (const c of all) if (c.result === undefined) c.stalled = true;
  // A parked job's last call is the one it waits on.
  if (parked) {
    const last = [...items].reverse().find((i) => i.kind === 'tool');
    if (last && last.kind === 'tool' && PARKING_TOOLS.has(last.card.name) && last.card.result !== undefined) last.card.waiting = true;
  }
  return items;
}

// The chat line of an Auto Prompter `policy` delta (or a `policy.fired`
// event's payload): a deny warns, an instruction or a one-time approval
// informs.
export function policyNotice(p: Record<string, unknown>): { tone: 'info' | 'warn'; text: string } | null {
  const rule = String(p.rule ?? '') || '(unnamed)';
  const tool = String(p.tool ?? '') || 'the tool';
  switch (p.decision) {
    case 'deny':
      return { tone: 'warn', text: `Policy rule ${rule} denied ${tool}` };
    case 'instruct':
      return { tone: 'info', text: `Policy rule ${rule} added an instruction after ${tool}` };
    case 'approve_once':
      return { tone: 'info', text: `Policy rule ${rule} approved this ${tool} call once` };
    default:
      return p.decision ? { tone: 'info', text: `Policy rule ${rule} fired on ${tool} (${String(p.decision)})` } : null;
  }
}

// A re-issued park call (same tool and arguments as a call answered before
// the job resumed) ends the earlier card instead of opening a new one.
function foldReissues(items: FeedItem[], parked: Set<ToolCard>): FeedItem[] {
  if (!parked.size) return items;
  const open = [...parked];
  return items.filter((i) => {
    if (i.kind !== 'tool' || parked.has(i.card) || !PARKING_TOOLS.has(i.card.name)) return true;
    const k = open.findIndex((p) => p.name === i.card.name && sameArgs(p.args, i.card.args));
    if (k < 0) return true;
    const first = open.splice(k, 1)[0];
    if (i.card.result === undefined) return true; // still streaming: merge once it answered
    first.parkNote = first.parkNote ?? first.result;
    first.result = i.card.result;
    first.isError = i.card.isError;
    first.finishedAt = i.card.finishedAt;
    return false;
  });
}

function sameArgs(a: string, b: string): boolean {
  try {
    return JSON.stringify(JSON.parse(a)) === JSON.stringify(JSON.parse(b));
  } catch {
    return a === b;
  }
}

// `complete` is shown as the agent's result comment, not as a card.
const notComplete = (i: FeedItem) => !(i.kind === 'tool' && i.card.name === 'complete');

// Merges the task's tool ledger into one job's items: every card the deltas
// built is matched by call id and completed from the ledger (a waiting park,
// the full result, the duration); ledger calls without a card — their deltas
// are gone after a restart, or were dropped from the buffer — are shown as
// cards before the deltas' stream. The ledger may list a call twice (the
// park, then its replay): the last entry wins, the park is kept as a note.
export function mergeLedger(jobId: string, items: FeedItem[], deltas: Delta[], calls: LedgerCall[]): FeedItem[] {
  const byId = new Map<string, LedgerCall>();
  const parks = new Map<string, LedgerCall>();
  const order: string[] = [];
  for (const c of calls) {
    if (c.job_id !== jobId) continue;
    const prev = byId.get(c.call_id);
    if (!prev) order.push(c.call_id);
    else if (prev.status === 'waiting' && c.status !== 'waiting') parks.set(c.call_id, prev);
    byId.set(c.call_id, c);
  }
  if (!byId.size) return items;
  const matched = new Set<string>();
  for (const i of items) {
    if (i.kind !== 'tool') continue;
    const callId = i.card.id.startsWith('/') ? i.card.id.slice(1) : '';
    const entry = callId ? byId.get(callId) : undefined;
    if (!entry) continue;
    matched.add(callId);
    applyLedger(i.card, entry, parks.get(callId));
  }
  const firstAt = deltas.length ? Number(deltas[0].at ?? 0) : 0;
  const missing = order
    .filter((id) => !matched.has(id))
    .map((id) => byId.get(id)!)
    .filter((c) => !deltas.length || (firstAt > 0 && Number(c.started_at ?? 0) > 0 && Number(c.started_at) < firstAt));
  if (!missing.length) return items;
  const cards: FeedItem[] = missing.map((c) => {
    const card: ToolCard = { id: `/${c.call_id}`, name: c.tool, args: JSON.stringify(c.args ?? {}), children: [] };
    applyLedger(card, c, parks.get(c.call_id));
    return { kind: 'tool', key: `ledger:${jobId}:${c.call_id}`, card };
  });
  return [...cards, ...items];
}

function applyLedger(card: ToolCard, c: LedgerCall, park: LedgerCall | undefined): void {
  if (!card.name) card.name = c.tool;
  if (!card.args) card.args = JSON.stringify(c.args ?? {});
  const result = c.result ?? undefined;
  switch (c.status) {
    case 'waiting':
      card.waiting = true;
      card.stalled = false;
      if (card.result === undefined && result !== undefined) card.result = result;
      break;
    case 'finished':
    case 'error':
      card.waiting = false;
      card.stalled = false;
      // The deltas carry the first 2000 bytes; the ledger's may be longer.
      if (result !== undefined && (card.result === undefined || result.length > card.result.length)) card.result = result;
      if (c.status === 'error') card.isError = true;
      break;
    case 'reconciled':
      card.reconciled = true;
      if (card.result === undefined) {
        card.stalled = true;
        if (result) card.result = result;
      }
      break;
    default:
      break;
  }
  if (park && !card.parkNote) card.parkNote = park.result ?? 'waited for a decision';
  if (c.duration_ms !== null && c.duration_ms !== undefined && c.status !== 'waiting') card.durationMs = c.duration_ms;
}

function statusLine(job: Job): FeedItem | null {
  const key = `status:${job.id}:${job.status}`;
  switch (job.status) {
    case 'failed':
      return { kind: 'notice', key, tone: 'error', text: `Job failed: ${job.error_message || 'unknown error'}` };
    case 'cancelled':
      return { kind: 'notice', key, tone: 'warn', text: 'Job cancelled.' };
    case 'retry':
      return { kind: 'notice', key, tone: 'warn', text: `Retrying after an error: ${job.error_message || 'transient error'}` };
    case 'waiting_human':
      if (job.wait_reason === 'ask') return null; // the question comment says it
      if (job.wait_reason === 'browser_login') return { kind: 'notice', key, tone: 'info', text: 'Waiting for you to log in in the agent’s browser.' };
      if (job.wait_reason === 'captcha') return { kind: 'notice', key, tone: 'info', text: 'Waiting for a CAPTCHA to be solved.' };
      return { kind: 'notice', key, tone: 'info', text: `Waiting for your decision (${job.wait_reason.replace('_', ' ')}).` };
    case 'waiting_subtasks':
      return { kind: 'notice', key, tone: 'info', text: 'Waiting for subtasks.' };
    default:
      return null;
  }
}

export function deliveryOf(c: Comment, taskActive: boolean): Delivery | undefined {
  // The instruction and a Continue's handoff note open their job's prompt
  // by construction; only what the person wrote in between can wait.
  if (!isPersonComment(c) || c.author === 'system' || c.kind === 'instruction' || c.kind === 'handoff') return undefined;
  if (c.delivered_at) return 'delivered';
  return taskActive ? 'pending' : undefined;
}

export function buildFeed(jobs: Job[], comments: Comment[], deltas: Record<string, Delta[]>, ledger: LedgerCall[] = []): FeedItem[] {
  const items = buildItems(jobs, comments, deltas, ledger);
  const active = jobs.some((j) => !TERMINAL.has(j.status));
  return items.map((i) => (i.kind === 'comment' ? { ...i, delivery: deliveryOf(i.comment, active) } : i));
}

function buildItems(jobs: Job[], comments: Comment[], deltas: Record<string, Delta[]>, ledger: LedgerCall[]): FeedItem[] {
  const items: FeedItem[] = [];
  const byJob = new Map<string, Comment[]>();
  for (const c of comments) {
    const list = byJob.get(c.job_id) ?? [];
    list.push(c);
    byJob.set(c.job_id, list);
  }
  const jobIds = new Set(jobs.map((j) => j.id));
  // Comments not tied to a listed job keep their place by time, on top.
  for (const c of comments) if (!jobIds.has(c.job_id)) items.push({ kind: 'comment', key: `c:${c.id}`, comment: c });
  jobs.forEach((job, index) => {
    items.push({ kind: 'job', key: `job:${job.id}`, job, index });
    const own = byJob.get(job.id) ?? [];
    const pending = new Map(own.filter((c) => c.kind === 'interjection').map((c) => [c.id, c]));
    for (const c of own) {
      if (isPersonComment(c) && c.kind !== 'interjection') items.push({ kind: 'comment', key: `c:${c.id}`, comment: c });
    }
    const live = job.status === 'running';
    const jobDeltas = deltas[job.id] ?? [];
    const folded = foldDeltas(job.id, jobDeltas, pending, live, job.status === 'waiting_human');
    items.push(...mergeLedger(job.id, folded, jobDeltas, ledger).filter(notComplete));
    for (const c of pending.values()) items.push({ kind: 'comment', key: `c:${c.id}`, comment: c });
    for (const c of own) {
      if (!isPersonComment(c)) items.push({ kind: 'comment', key: `c:${c.id}`, comment: c });
    }
    const line = statusLine(job);
    if (line) items.push(line);
  });
  return items;
}

// One line per durable event for the activity timeline.
export function describeEvent(e: TaskEvent): string {
  const p = e.payload ?? {};
  switch (e.type) {
    case 'job.status': {
      const extra = p.wait_reason ? ` (${String(p.wait_reason)})` : p.error ? ` — ${String(p.error)}` : '';
      const from = String(p.from ?? '');
      const to = String(p.to ?? '');
      return `job ${!from || from === to ? to : `${from} → ${to}`}${extra}`;
    }
    case 'llm.call':
      return `model call: ${String(p.promptTokens ?? 0)} prompt tokens (${String(p.cachedPromptTokens ?? 0)} cached${p.cacheWritePromptTokens ? `, ${String(p.cacheWritePromptTokens)} written` : ''}), ${String(p.completionTokens ?? 0)} out`;
    case 'request.created':
      return `approval requested: ${String(p.kind ?? '')} ${String(p.name ?? '')}`;
    case 'request.decided':
      return `request ${String(p.status ?? p.decision ?? 'decided')}`;
    case 'comment.created':
      return `comment (${String(p.kind ?? '')})`;
    case 'task.created':
      return 'task created';
    case 'task.updated':
      return p.title ? `renamed to “${String(p.title)}”` : 'task updated';
    case 'job.cancel_requested':
      return 'cancel requested';
    case 'policy.fired':
      return policyNotice(p)?.text ?? 'policy rule fired';
    case 'grant.created':
      return `permission granted: ${String(p.tool ?? p.name ?? '')}`;
    case 'grant.used':
      return `permission used: ${String(p.tool ?? p.name ?? '')}`;
    default:
      return e.type;
  }
}
