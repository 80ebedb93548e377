// The token gate: the API token is entered once and kept in localStorage.
import { useState } from 'react';
import { Api, setToken } from '../api';

export function Login({ onToken, demo }: { onToken: (t: string) => void; demo: boolean }) {
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
        <label htmlFor="token">API token</label>
        <input
          id="token"
          type="password"
          autoFocus
          value={value}
          onChange={(e) => setValue(e.target.value)}
          placeholder="paste the bearer token"
        />
        <p className="muted">
          <code>maestro serve</code> printed the admin token on its first start; it is also in{' '}
          <code>data/admin_token</code>. It is kept in this browser only.
        </p>
        {error && <p className="error" role="alert">{error}</p>}
        <button className="primary" type="submit">
          Sign in
        </button>
      </form>
    </div>
  );
}
