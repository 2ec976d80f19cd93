import { type FormEvent, useState } from 'react';
import { ApiRequestError, api } from '../lib/api.js';

/** Shown when the console requires a token (it listens on a non-loopback address) and none was given yet. */
export function LoginGate({ onDone }: { onDone: () => void }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState<string | null>(null);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    try {
      await api.post('_console/login', { token });
      onDone();
      window.location.reload();
    } catch (err) {
      setError(err instanceof ApiRequestError && err.status === 401 ? 'That token is not the console token.' : String((err as Error).message));
    }
  };
  return (
    <main className="login">
      <form onSubmit={submit} className="card login-card" aria-labelledby="login-title">
        <h1 id="login-title">Console token</h1>
        <p className="muted">
          This console listens on a network address, so it asks for the token it was started with (<code>--token</code> or <code>FLINT_CONSOLE_TOKEN</code>).
        </p>
        <label htmlFor="token">Token</label>
        <input id="token" className="input" type="password" autoComplete="current-password" value={token} onChange={(e) => setToken(e.target.value)} />
        {error && (
          <p role="alert" className="error-text">
            {error}
          </p>
        )}
        <button type="submit" className="btn primary" disabled={token === ''}>
          Open the console
        </button>
      </form>
    </main>
  );
}
