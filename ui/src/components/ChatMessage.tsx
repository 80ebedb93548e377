// ChatMessage: one feed item — a person's or the agent's comment (markdown),
// the streaming assistant text (markdown, a blinking cursor while live), a
// tool-call card, a job divider, a movement transition or a notice.
import type { FeedItem } from '../feed';
import { JobDivider } from './JobDivider';
import { MarkdownView } from './MarkdownView';
import { RelativeTime } from './RelativeTime';
import { ToolCallCard } from './ToolCallCard';

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
              {mine ? c.author : 'agent'} · <RelativeTime ms={c.created_at} />
            </small>
          </header>
          <MarkdownView className="msg-body" text={c.body} />
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
              <div className="msg-body plain">{item.reasoning}</div>
            </details>
          )}
          {(item.text || item.live) && <MarkdownView className="msg-body" text={item.text} live={item.live} />}
        </article>
      );
    case 'tool':
      return <ToolCallCard card={item.card} />;
    case 'job':
      return <JobDivider job={item.job} index={item.index} />;
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
