// ChatMessage: one feed item — a person's or the agent's comment, the
// streaming assistant text, a collapsible tool-call card (arguments, result,
// duration, nested delegate stream), a movement transition or a notice.
import { useState } from 'react';
import type { FeedItem, ToolCard } from '../feed';

const KIND_LABEL: Record<string, string> = {
  instruction: 'Instruction',
  reply: 'You',
  answer: 'Your answer',
  interjection: 'You (while it worked)',
  handoff: 'Handoff',
  result: 'Result',
  question: 'Question for you',
  note: 'Note',
};

export function ChatMessage({ item }: { item: FeedItem }) {
  switch (item.kind) {
    case 'comment': {
      const c = item.comment;
      const mine = c.author !== 'agent';
      return (
        <article className={`msg ${mine ? 'msg-user' : 'msg-agent'} kind-${c.kind}`} data-kind={c.kind}>
          <header>
            <strong>{KIND_LABEL[c.kind] ?? c.kind}</strong>
            <small className="muted">
              {' '}
              {mine ? c.author : 'agent'} · {new Date(c.created_at).toLocaleTimeString()}
            </small>
          </header>
          <div className="msg-body">{c.body}</div>
          {item.delivery && (
            <small className={`delivery delivery-${item.delivery}`} data-testid="delivery">
              {item.delivery === 'delivered' ? 'delivered' : 'will be delivered to the next step'}
            </small>
          )}
        </article>
      );
    }
    case 'assistant':
      return (
        <article className={`msg msg-agent msg-stream ${item.live ? 'live' : ''}`} data-testid="assistant-text">
          {item.reasoning && (
            <details className="reasoning">
              <summary>Reasoning</summary>
              <div className="msg-body">{item.reasoning}</div>
            </details>
          )}
          {(item.text || item.live) && (
            <div className="msg-body">
              {item.text}
              {item.live && <span className="cursor" aria-label="streaming" />}
            </div>
          )}
        </article>
      );
    case 'tool':
      return <ToolCallCard card={item.card} />;
    case 'movement':
      return (
        <div className="movement" role="separator">
          <span>movement → {item.movement}</span>
        </div>
      );
    case 'notice':
      return (
        <div className={`notice notice-${item.tone}`} role={item.tone === 'error' ? 'alert' : 'status'}>
          {item.text}
        </div>
      );
  }
}

function prettyArgs(args: string): string {
  try {
    return JSON.stringify(JSON.parse(args), null, 2);
  } catch {
    return args;
  }
}

function ToolCallCard({ card }: { card: ToolCard }) {
  const [open, setOpen] = useState(false);
  const state = card.result === undefined ? (card.stalled ? 'stalled' : 'running') : card.isError ? 'error' : 'ok';
  const icon = { running: '⏳', stalled: '⏸', error: '⚠️', ok: '✔' }[state];
  const ms = card.startedAt && card.finishedAt ? card.finishedAt - card.startedAt : undefined;
  return (
    <div className={`tool-card tool-${state}`} data-testid="tool-card" data-tool={card.name}>
      <button className="tool-head" aria-expanded={open} onClick={() => setOpen((o) => !o)}>
        <span className="tool-icon" aria-label={state}>{icon}</span>
        <code>{card.name || 'tool'}</code>
        <span className="muted tool-summary">{summary(card.args)}</span>
        <span className="spacer" />
        {ms !== undefined && <small className="muted">{ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`}</small>}
        <span className="chev">{open ? '▾' : '▸'}</span>
      </button>
      {open && (
        <div className="tool-detail">
          <div className="label">Arguments</div>
          <pre>{prettyArgs(card.args)}</pre>
          <div className="label">Result</div>
          <pre className={card.isError ? 'error' : ''}>
            {card.result ?? (card.stalled ? '(no result: the job parked or stopped here)' : '(running…)')}
          </pre>
          {card.children.length > 0 && (
            <div className="nested">
              {card.children.map((c) => (
                <ChatMessage key={c.key} item={c} />
              ))}
            </div>
          )}
        </div>
      )}
    </div>
  );
}

function summary(args: string): string {
  try {
    const o = JSON.parse(args) as Record<string, unknown>;
    const first = Object.values(o).find((v) => typeof v === 'string') as string | undefined;
    return first ? first.slice(0, 60) : '';
  } catch {
    return '';
  }
}
