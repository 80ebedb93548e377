// ToolCallCard: one logical tool call — running (⏳), waiting on a person
// (⌛, a parked request), stalled (⏸), failed (⚠️) or done (✔) — with its
// arguments (file writes as text), its result (long ones collapsed), the
// duration and a delegate sub-agent's nested stream.
import { useState } from 'react';
import type { ToolCard } from '../feed';
import { ChatMessage } from './ChatMessage';
import { CollapsibleText } from './CollapsibleText';
import { FILE_TOOLS, FileToolContent, parseFileArgs } from './FileToolContent';

type State = 'running' | 'waiting' | 'stalled' | 'error' | 'ok';
const ICON: Record<State, string> = { running: '⏳', waiting: '⌛', stalled: '⏸', error: '⚠️', ok: '✔' };

export function cardState(card: ToolCard): State {
  if (card.waiting) return 'waiting';
  if (card.result === undefined) return card.stalled ? 'stalled' : 'running';
  return card.isError ? 'error' : 'ok';
}

function prettyArgs(args: string): string {
  try {
    return JSON.stringify(JSON.parse(args), null, 2);
  } catch {
    return args;
  }
}

// The argument that says what the call is about: a path, a command, … else
// the first string.
const SUMMARY_KEYS = ['path', 'command', 'pattern', 'query', 'url', 'name', 'task', 'tool'];

function summary(args: string): string {
  const o = parseFileArgs(args);
  const key = o ? SUMMARY_KEYS.find((k) => typeof o[k] === 'string' && o[k]) : undefined;
  const first = o ? ((key ? o[key] : Object.values(o).find((v) => typeof v === 'string')) as string | undefined) : undefined;
  return first ? first.slice(0, 60) : '';
}

function duration(card: ToolCard): number | undefined {
  if (card.startedAt && card.finishedAt) return card.finishedAt - card.startedAt;
  return card.durationMs;
}

export function ToolCallCard({ card }: { card: ToolCard }) {
  const [open, setOpen] = useState(false);
  const state = cardState(card);
  const ms = duration(card);
  const fileArgs = FILE_TOOLS.has(card.name) ? parseFileArgs(card.args) : null;
  return (
    <div className={`tool-card tool-${state}`} data-testid="tool-card" data-tool={card.name} data-state={state}>
      <button className="tool-head" aria-expanded={open} onClick={() => setOpen((o) => !o)}>
        <span className="tool-icon" aria-label={state} title={state}>
          {ICON[state]}
        </span>
        <code>{card.name || 'tool'}</code>
        <span className="muted tool-summary">{summary(card.args)}</span>
        {state === 'waiting' && <small className="tool-wait-label">waiting</small>}
        <span className="spacer" />
        {ms !== undefined && state !== 'waiting' && (
          <small className="muted">{ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`}</small>
        )}
        <span className="chev">{open ? '▾' : '▸'}</span>
      </button>
      {open && (
        <div className="tool-detail">
          <div className="label">{fileArgs ? (card.name === 'EditFile' ? 'Edit' : 'Content') : 'Arguments'}</div>
          {fileArgs ? <FileToolContent tool={card.name} args={fileArgs} /> : <CollapsibleText text={prettyArgs(card.args)} />}
          {card.parkNote && (
            <>
              <div className="label">Waited for a decision</div>
              <p className="muted park-note">{card.parkNote}</p>
            </>
          )}
          <div className="label">Result</div>
          {card.result !== undefined ? (
            <CollapsibleText text={card.result} className={card.isError ? 'error' : ''} />
          ) : (
            <pre>{card.stalled ? `(no result: ${card.reconciled ? 'interrupted by a restart' : 'the job parked or stopped here'})` : '(running…)'}</pre>
          )}
          {card.children.length > 0 && <div className="nested">{card.children.map((c) => <ChatMessage key={c.key} item={c} />)}</div>}
        </div>
      )}
    </div>
  );
}
