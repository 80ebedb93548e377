// ChatMessageFeed: the ordered feed items; sticks to the bottom while the
// person is at the bottom, so streamed text stays in view without stealing
// the scroll from someone reading older messages.
import { useEffect, useRef } from 'react';
import type { FeedItem } from '../feed';
import { ChatMessage } from './ChatMessage';

export function ChatMessageFeed({ items }: { items: FeedItem[] }) {
  const ref = useRef<HTMLDivElement>(null);
  const atBottom = useRef(true);
  useEffect(() => {
    const el = ref.current;
    if (el && atBottom.current) el.scrollTop = el.scrollHeight;
  });
  return (
    <div
      className="feed"
      ref={ref}
      role="log"
      aria-live="polite"
      data-testid="feed"
      onScroll={(e) => {
        const el = e.currentTarget;
        atBottom.current = el.scrollHeight - el.scrollTop - el.clientHeight < 60;
      }}
    >
      {items.length === 0 && <p className="muted pad">No messages yet.</p>}
      {items.map((item) => (
        <ChatMessage key={item.key} item={item} />
      ))}
    </div>
  );
}
