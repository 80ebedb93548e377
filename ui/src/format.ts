// Small formatting helpers: plurals, token counts, costs, relative times.
import type { Usage } from './types';

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

// 950 → "950", 12 345 → "12.3k", 2 500 000 → "2.5M".
export function tokens(n: number): string {
  if (!Number.isFinite(n)) return '0';
  if (n < 1000) return String(Math.round(n));
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 2 : 1).replace(/\.?0+$/, '')}k`;
  return `${(n / 1_000_000).toFixed(2).replace(/\.?0+$/, '')}M`;
}

// 0.012345 USD → "$0.0123"; other currencies keep their code.
export function cost(value: number, currency = 'USD'): string {
  const digits = value >= 1 ? 2 : 4;
  const n = value.toFixed(digits);
  return currency === 'USD' ? `$${n}` : `${n} ${currency}`;
}

export function cachePct(u: Usage): number {
  if (Number.isFinite(u.cache_hit_pct)) return Math.round(u.cache_hit_pct);
  return u.prompt_tokens ? Math.round((100 * u.cached_tokens) / u.prompt_tokens) : 0;
}

// One line: "3 model calls · 12.3k prompt (10.1k cached, 82%) · 512 out · $0.0123".
export function usageLine(u: Usage): string {
  const parts = [
    plural(u.llm_calls, 'model call'),
    `${tokens(u.prompt_tokens)} prompt (${tokens(u.cached_tokens)} cached, ${cachePct(u)}%)`,
    `${tokens(u.completion_tokens)} out`,
  ];
  if (u.cost !== null && u.cost !== undefined) parts.push(cost(u.cost, u.currency));
  return parts.join(' · ');
}

export function absoluteTime(ms: number): string {
  return new Date(ms).toLocaleString();
}

// "just now", "3 min ago", "2 h ago", "yesterday", "5 days ago", then the date.
export function relativeTime(ms: number, now = Date.now()): string {
  const s = Math.round((now - ms) / 1000);
  if (s < 45) return 'just now';
  const m = Math.round(s / 60);
  if (m < 60) return `${m} min ago`;
  const h = Math.round(m / 60);
  if (h < 24) return `${h} h ago`;
  const d = Math.round(h / 24);
  if (d === 1) return 'yesterday';
  if (d < 30) return `${d} days ago`;
  return new Date(ms).toLocaleDateString();
}

export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}
