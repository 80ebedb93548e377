// The sign-in gate. An API token is entered once and kept in localStorage
// (programs and the admin use those). When GET /api/info says the server has
// OIDC (`auth.oidc`), "Sign in with SSO" goes to /auth/login with the current
// path as return_to: the identity provider's login, then the server's
// callback sets the session cookies and sends the browser back here.
import { useState } from 'react';
import { Api, setToken } from '../api';

// The local path (and query) to come back to after the provider's login.
function returnTo(): string {
  const p = window.location.pathname + window.location.search;
  return p.startsWith('/') && !p.startsWith('//') ? p : '/';
}

export function Login({ onToken, demo, sso = '' }: { onToken: (t: string) => void; demo: boolean; sso?: string }) {
  const [value, setValue] = useState('');
  const [error, setError] = useState('');
  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    const t = value.trim();
    if (!t) return;
    setToken(t);
    try {
      await Api.checkToken();
      onToken(t);
    } catch (err) {
      setToken('');
      setError(`That token was not accepted: ${(err as Error).message}`);
    }
  };
  return (
    <div className="login">
      <form onSubmit={submit} className="card">
        <h1>maestro</h1>
        {demo && <p className="demo-badge">Demo model — scripted answers, not a real LLM</p>}
        {sso && (
          <>
            <button
              type="button"
              className="primary sso-login"
              data-testid="sso-login"
              onClick={() => {
                window.location.href = `${sso}?return_to=${encodeURIComponent(returnTo())}`;
              }}
            >
              Sign in with SSO
            </button>
            <p className="muted">Or, for an API token:</p>
          </>
        )}
        <label htmlFor="token">API token</label>
        <input
          id="token"
          type="password"
          autoFocus={!sso}
          value={value}
          onChange={(e) => setValue(e.target.value)}
          placeholder="paste the bearer token"
        />
        <p className="muted">
          <code>maestro serve</code> printed the admin token on its first start; it is also in{' '}
          <code>data/admin_token</code>. It is kept in this browser only.
        </p>
        {error && <p className="error" role="alert">{error}</p>}
        <button className={sso ? '' : 'primary'} type="submit">
          Sign in
        </button>
      </form>
    </div>
  );
}
