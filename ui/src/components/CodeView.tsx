// CodeView: text with syntax highlighting by language (a file extension or
// a fence's name), line by line so long files stay cheap to lay out.
import { useMemo } from 'react';
import { highlight } from '../render/highlight';

export function CodeView({ text, language, className = '' }: { text: string; language: string; className?: string }) {
  const html = useMemo(() => highlight(text, language).html, [text, language]);
  return (
    <pre className={`code-view ${className}`}>
      <code className="hljs" dangerouslySetInnerHTML={{ __html: html }} />
    </pre>
  );
}
