// The API tokens page (/tokens, issue 49): the caller's own scoped tokens
// (GET /api/local/tokens) with their scopes, expiry and state; a form to
// create one (name, scopes, lifetime) whose plain token is shown once, with
// a copy button — the server keeps only its hash; and Revoke (DELETE), after
// which the token is refused at once. The scopes offered are the caller's
// own (the server refuses a token wider than the credential minting it).
import { useCallback, useEffect, useState } from 'react';
import { Api, ApiError } from '../api';
import type { ApiToken, Me, Scope } from '../types';

const SCOPES: { scope: Scope; what: string }[] = [
  { scope: 'read', what: 'see tasks, spaces and results' },
  { scope: 'run', what: 'create, comment, continue, cancel' },
  { scope: 'decide', what: 'approve or deny requests, raise budgets' },
  { scope: 'admin', what: 'audit log and administration' },
];

const LIFETIMES: { label: string; seconds: number }[] = [
  { label: '1 day', seconds: 86400 },
  { label: '7 days', seconds: 7 * 86400 },
  { label: '30 days', seconds: 30 * 86400 },
  { label: '90 days', seconds: 90 * 86400 },
  { label: '1 year', seconds: 365 * 86400 },
];

function when(ms: number): string {
  return ms ? new Date(ms).toLocaleString() : '—';
}

function state(t: ApiToken, now: number): string {
  if (t.revoked_at) return 'revoked';
  if (t.expires_at && t.expires_at <= now) return 'expired';
  return 'active';
}

function message(e: unknown): string {
  if (e instanceof ApiError) return e.field ? `${e.field}: ${e.message}` : e.message;
  return e instanceof Error ? e.message : String(e);
}

export function TokensPage({ me }: { me: Me | null }) {
  const [tokens, setTokens] = useState<ApiToken[]>([]);
  const [error, setError] = useState('');
  const [name, setName] = useState('');
  // Offer only the caller's own scopes (all four when unknown).
  const offered = SCOPES.filter((s) => !me || me.scopes.length === 0 || me.scopes.includes(s.scope));
  const [scopes, setScopes] = useState<Scope[]>(['read']);
  const [lifetime, setLifetime] = useState(90 * 86400);
  const [formError, setFormError] = useState('');
  const [created, setCreated] = useState<{ name: string; token: string } | null>(null);
  const [copied, setCopied] = useState(false);

  const reload = useCallback(() => {
    Api.tokens()
      .then((r) => {
        setTokens(r.tokens);
        setError('');
      })
      .catch((e) => setError(message(e)));
  }, []);
  useEffect(reload, [reload]);

  const create = async (ev: React.FormEvent) => {
    ev.preventDefault();
    setFormError('');
    try {
      const r = await Api.createToken({ name: name.trim(), scopes, expires_in_s: lifetime });
      setCreated({ name: r.name || name.trim(), token: r.token });
      setCopied(false);
      setName('');
      reload();
    } catch (e) {
      setFormError(message(e));
    }
  };
  const revoke = async (t: ApiToken) => {
    if (!window.confirm(`Revoke the token "${t.name}"? Programs using it stop working at once.`)) return;
    try {
      await Api.revokeToken(t.id);
      reload();
    } catch (e) {
      setError(message(e));
    }
  };
  const copy = async () => {
    if (!created) return;
    try {
      await navigator.clipboard.writeText(created.token);
      setCopied(true);
    } catch {
      // No clipboard (an insecure origin): select the text for Ctrl+C.
      const el = document.getElementById('new-token-value') as HTMLInputElement | null;
      el?.select();
    }
  };
  const now = Date.now();

  return (
    <section className="tokens-page page" data-testid="tokens-page" style={{ padding: '1rem', overflow: 'auto' }}>
      <h2>API tokens</h2>
      <p className="muted">
        Tokens let programs call the API as you ({me?.user ?? 'this user'}), limited to the scopes you pick. A token is shown once, when it is
        created; maestro keeps only its hash.
      </p>
      {error && <p className="error" role="alert">{error}</p>}
      {created && (
        <div className="card new-token" data-testid="new-token" role="status">
          <div className="label">
            New token <strong>{created.name}</strong> — copy it now, it will not be shown again
          </div>
          <div className="row">
            <input id="new-token-value" readOnly value={created.token} aria-label="New token" data-testid="new-token-value" onFocus={(e) => e.target.select()} />
            <button type="button" onClick={() => void copy()}>
              {copied ? 'Copied' : 'Copy'}
            </button>
            <button type="button" className="ghost" onClick={() => setCreated(null)}>
              Done
            </button>
          </div>
        </div>
      )}
      <table className="data-table" data-testid="tokens-table">
        <thead>
          <tr>
            <th align="left">Name</th>
            <th align="left">Scopes</th>
            <th align="left">Created</th>
            <th align="left">Expires</th>
            <th align="left">State</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {tokens.length === 0 && (
            <tr>
              <td colSpan={6} className="muted">
                No tokens yet.
              </td>
            </tr>
          )}
          {tokens.map((t) => (
            <tr key={t.id} data-testid="token-row" data-token-id={t.id}>
              <td>{t.name || <span className="muted">(unnamed)</span>}</td>
              <td>{t.scopes.join(', ')}</td>
              <td>{when(t.created_at)}</td>
              <td>{when(t.expires_at)}</td>
              <td data-part="state">{state(t, now)}</td>
              <td>
                {!t.revoked_at && (
                  <button className="ghost" onClick={() => void revoke(t)} aria-label={`Revoke ${t.name}`}>
                    Revoke
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>

      <form className="token-form" onSubmit={(e) => void create(e)} style={{ display: 'grid', gap: '0.5rem', maxWidth: '40rem', marginTop: '1rem' }}>
        <h3>New token</h3>
        <label>
          Name <input name="name" required maxLength={100} value={name} onChange={(e) => setName(e.target.value)} placeholder="e.g. ci" />
        </label>
        <fieldset>
          <legend>Scopes</legend>
          {offered.map((s) => (
            <label key={s.scope} style={{ display: 'block' }}>
              <input
                type="checkbox"
                name="scopes"
                value={s.scope}
                checked={scopes.includes(s.scope)}
                onChange={(e) => setScopes(e.target.checked ? [...scopes, s.scope] : scopes.filter((x) => x !== s.scope))}
              />{' '}
              {s.scope} <span className="muted">— {s.what}</span>
            </label>
          ))}
        </fieldset>
        <label>
          Expires after{' '}
          <select name="expires_in_s" value={lifetime} onChange={(e) => setLifetime(Number(e.target.value))}>
            {LIFETIMES.map((l) => (
              <option key={l.seconds} value={l.seconds}>
                {l.label}
              </option>
            ))}
          </select>
        </label>
        {formError && <p className="error" role="alert">{formError}</p>}
        <button className="primary" type="submit" disabled={scopes.length === 0}>
          Create token
        </button>
      </form>
    </section>
  );
}
