// UsageSummary: a task's (or job's) tokens — prompt / cached / completion —
// the cache-hit share and, when the server has a price table, the cost.
import type { Usage } from '../types';
import { cachePct, cost, plural, tokens } from '../format';

export function UsageSummary({ usage, compact = false }: { usage: Usage; compact?: boolean }) {
  const hasCost = usage.cost !== null && usage.cost !== undefined;
  const title =
    `${plural(usage.llm_calls, 'model call')}: ${usage.prompt_tokens} prompt tokens ` +
    `(${usage.cached_tokens} cached` +
    (usage.cache_write_tokens ? `, ${usage.cache_write_tokens} written to the cache` : '') +
    `), ${usage.completion_tokens} completion tokens` +
    (usage.model_ms ? `, ${(usage.model_ms / 1000).toFixed(1)} s in the model` : '');
  if (compact) {
    return (
      <span className="usage usage-compact" title={title} data-testid="usage">
        {hasCost ? cost(usage.cost!, usage.currency) : `${tokens(usage.prompt_tokens + usage.completion_tokens)} tok`}
      </span>
    );
  }
  return (
    <span className="usage" title={title} data-testid="usage">
      <span data-part="tokens">
        {tokens(usage.prompt_tokens)} prompt / {tokens(usage.cached_tokens)} cached / {tokens(usage.completion_tokens)} out
      </span>
      <span data-part="cache"> · {cachePct(usage)}% cache hit</span>
      {hasCost && <span data-part="cost"> · {cost(usage.cost!, usage.currency)}</span>}
    </span>
  );
}
