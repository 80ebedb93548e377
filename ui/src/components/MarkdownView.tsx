// MarkdownView: sanitized markdown (render/markdown.ts) for agent text,
// results, questions and the person's comments. While `live`, a blinking
// cursor sits at the end of the last block; the markup is only replaced when
// the text changed, so a growing stream re-renders in place. Each code
// block's Copy button copies its code.
import { useLayoutEffect, useMemo, useRef } from 'react';
import { renderMarkdown } from '../render/markdown';
import { copyText } from '../render/clipboard';

export function MarkdownView({ text, live = false, className = '' }: { text: string; live?: boolean; className?: string }) {
  const ref = useRef<HTMLDivElement>(null);
  const html = useMemo(() => renderMarkdown(text), [text]);

  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return;
    el.querySelectorAll(':scope .cursor').forEach((c) => c.remove());
    if (!live) return;
    const cursor = document.createElement('span');
    cursor.className = 'cursor';
    cursor.setAttribute('aria-label', 'streaming');
    lastBlock(el).appendChild(cursor);
  }, [html, live]);

  const onClick = (e: React.MouseEvent<HTMLDivElement>) => {
    const btn = (e.target as HTMLElement).closest('button.copy-code');
    if (!btn) return;
    const code = btn.closest('.code-block')?.querySelector('pre code')?.textContent ?? '';
    void copyText(code).then((ok) => {
      btn.textContent = ok ? 'Copied' : 'Copy failed';
      window.setTimeout(() => (btn.textContent = 'Copy'), 1500);
    });
  };

  return <div ref={ref} className={`md ${className}`} onClick={onClick} dangerouslySetInnerHTML={{ __html: html }} />;
}

// The innermost last element that holds text (a paragraph, list item, code…).
function lastBlock(root: HTMLElement): HTMLElement {
  let el: HTMLElement = root;
  for (;;) {
    const last = el.lastElementChild as HTMLElement | null;
    if (!last || ['BR', 'HR', 'INPUT', 'BUTTON'].includes(last.tagName)) return el;
    if (last.classList.contains('code-block')) return (last.querySelector('pre code') as HTMLElement) ?? last;
    if (['TABLE', 'TBODY', 'THEAD', 'TR', 'UL', 'OL', 'LI', 'BLOCKQUOTE', 'DIV', 'P', 'H1', 'H2', 'H3', 'H4', 'H5', 'H6', 'PRE'].includes(last.tagName)) {
      el = last;
      continue;
    }
    return el;
  }
}
