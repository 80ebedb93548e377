// Markdown (GFM: headings, lists, tables, links, code fences) → sanitized
// HTML. Raw HTML in the text is shown as text, never parsed; links keep only
// http(s) and mailto targets and open with rel="noopener noreferrer"; images
// become links (no remote loads); code fences are highlighted and get a copy
// button (MarkdownView handles its clicks). DOMPurify runs over the result as
// a second line of defence with a fixed allowlist.
import DOMPurify from 'dompurify';
import { Marked, type Tokens } from 'marked';
import { escapeHtml, highlight } from './highlight';

const SAFE_URL = /^(https?:|mailto:)/i;

function safeHref(href: string): string | null {
  const h = href.trim();
  return SAFE_URL.test(h) ? h : null;
}

const marked = new Marked({
  gfm: true,
  breaks: false,
  renderer: {
    html({ text }: Tokens.HTML | Tokens.Tag) {
      return escapeHtml(text);
    },
    code({ text, lang }: Tokens.Code) {
      const info = (lang ?? '').split(/\s+/)[0] ?? '';
      const { html, language } = highlight(text.replace(/\n$/, ''), info);
      const label = language || info;
      return (
        `<div class="code-block"><div class="code-bar"><span class="code-lang">${escapeHtml(label)}</span>` +
        `<button type="button" class="copy-code" aria-label="Copy code">Copy</button></div>` +
        `<pre><code class="hljs${language ? ` language-${language}` : ''}">${html}</code></pre></div>\n`
      );
    },
    link({ href, title, tokens }: Tokens.Link) {
      const inner = this.parser.parseInline(tokens);
      const url = safeHref(href);
      if (!url) return `<span class="unsafe-link">${inner}</span>`;
      const t = title ? ` title="${escapeHtml(title)}"` : '';
      return `<a href="${escapeHtml(url)}"${t} target="_blank" rel="noopener noreferrer">${inner}</a>`;
    },
    image({ href, text }: Tokens.Image) {
      const url = safeHref(href);
      const label = escapeHtml(text || href);
      return url ? `<a href="${escapeHtml(url)}" target="_blank" rel="noopener noreferrer">🖼 ${label}</a>` : label;
    },
  },
});

const ALLOWED_TAGS = [
  'a', 'b', 'blockquote', 'br', 'button', 'code', 'del', 'div', 'em', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'hr', 'i',
  'input', 'li', 'ol', 'p', 'pre', 's', 'span', 'strong', 'table', 'tbody', 'td', 'th', 'thead', 'tr', 'ul',
];
const ALLOWED_ATTR = ['href', 'title', 'class', 'target', 'rel', 'type', 'aria-label', 'checked', 'disabled', 'align', 'start'];

let hooked = false;
function purify(html: string): string {
  if (!hooked) {
    hooked = true;
    DOMPurify.addHook('afterSanitizeAttributes', (node) => {
      if (node.tagName === 'A') {
        const href = node.getAttribute('href') ?? '';
        if (!safeHref(href)) node.removeAttribute('href');
        node.setAttribute('target', '_blank');
        node.setAttribute('rel', 'noopener noreferrer');
      }
      if (node.tagName === 'INPUT' && node.getAttribute('type') !== 'checkbox') node.remove();
    });
  }
  return DOMPurify.sanitize(html, { ALLOWED_TAGS, ALLOWED_ATTR, ALLOW_DATA_ATTR: false });
}

export function renderMarkdown(text: string): string {
  return purify(marked.parse(text, { async: false }));
}
