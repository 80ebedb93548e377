// CollapsibleText: a long tool result or argument shown as its first lines
// with "show more" / "show less".
import { useState } from 'react';

const MAX_LINES = 12;
const MAX_CHARS = 1200;

export function CollapsibleText({ text, className = '' }: { text: string; className?: string }) {
  const [open, setOpen] = useState(false);
  const lines = text.split('\n');
  const long = lines.length > MAX_LINES || text.length > MAX_CHARS;
  let shown = text;
  if (long && !open) {
    shown = lines.slice(0, MAX_LINES).join('\n');
    if (shown.length > MAX_CHARS) shown = shown.slice(0, MAX_CHARS);
  }
  return (
    <div className="collapsible">
      <pre className={className}>
        {shown}
        {long && !open ? '…' : ''}
      </pre>
      {long && (
        <button type="button" className="link small show-more" onClick={() => setOpen((o) => !o)} aria-expanded={open}>
          {open ? 'show less' : `show more (${lines.length} lines, ${text.length} chars)`}
        </button>
      )}
    </div>
  );
}
