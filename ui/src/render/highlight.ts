// Syntax highlighting with highlight.js core and a small language subset
// (keeps the bundle small). `highlight` returns HTML-escaped markup.
import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import cpp from 'highlight.js/lib/languages/cpp';
import css from 'highlight.js/lib/languages/css';
import diff from 'highlight.js/lib/languages/diff';
import go from 'highlight.js/lib/languages/go';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import markdown from 'highlight.js/lib/languages/markdown';
import python from 'highlight.js/lib/languages/python';
import rust from 'highlight.js/lib/languages/rust';
import sql from 'highlight.js/lib/languages/sql';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';

const LANGS = { bash, cpp, css, diff, go, javascript, json, markdown, python, rust, sql, typescript, xml, yaml };
for (const [name, lang] of Object.entries(LANGS)) hljs.registerLanguage(name, lang);
hljs.registerAliases(['sh', 'shell', 'zsh', 'console'], { languageName: 'bash' });
hljs.registerAliases(['c', 'cc', 'h', 'hpp', 'cxx', 'c++'], { languageName: 'cpp' });
hljs.registerAliases(['js', 'jsx', 'mjs', 'cjs'], { languageName: 'javascript' });
hljs.registerAliases(['ts', 'tsx', 'mts'], { languageName: 'typescript' });
hljs.registerAliases(['py'], { languageName: 'python' });
hljs.registerAliases(['yml'], { languageName: 'yaml' });
hljs.registerAliases(['md'], { languageName: 'markdown' });
hljs.registerAliases(['html', 'svg'], { languageName: 'xml' });
hljs.registerAliases(['rs'], { languageName: 'rust' });
hljs.registerAliases(['patch'], { languageName: 'diff' });

export function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

// Highlights `code` as `lang` (a fence's info word or a file extension);
// unknown or empty languages are escaped as plain text (no auto-detection:
// it is slow and often wrong on short snippets).
export function highlight(code: string, lang: string): { html: string; language: string } {
  const name = lang.trim().toLowerCase();
  if (name && hljs.getLanguage(name)) {
    try {
      return { html: hljs.highlight(code, { language: name, ignoreIllegals: true }).value, language: name };
    } catch {
      /* fall through to plain text */
    }
  }
  return { html: escapeHtml(code), language: '' };
}

// The language of a file, from its name.
export function languageOfPath(path: string): string {
  const base = path.split('/').pop() ?? '';
  if (/^(Makefile|CMakeLists\.txt)$/i.test(base)) return '';
  if (/^Dockerfile$/i.test(base)) return 'bash';
  const ext = base.includes('.') ? base.split('.').pop()!.toLowerCase() : '';
  return hljs.getLanguage(ext) ? ext : '';
}
