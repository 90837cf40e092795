import { useEffect, useState, type FormEvent } from 'react';
import { api } from './api';
import { clearToken, setProviderSession, setToken } from './session';
import { ErrorBox } from './components';

/** GET /api/v1/sys/oidc: whether operators may sign in through an OpenID provider (admin.oidc). */
interface OidcStatus {
  enabled: boolean;
  providerName?: string;
  loginPath?: string;
}

/**
 * The sign-in gate: an admin token, and "Sign in with <provider>" when the server says
 * admin.oidc is on. Back from the provider, the tab holds a session cookie it cannot read:
 * the gate asks whoami once, and a session the server accepts opens the console.
 */
export function SignIn({ onDone, reason }: { onDone: () => void; reason: unknown }) {
  const [token, setTokenInput] = useState('');
  const [error, setError] = useState<unknown>(reason);
  const [oidc, setOidc] = useState<OidcStatus | null>(null);

  useEffect(() => {
    let live = true;
    api<OidcStatus>('GET', '/api/v1/sys/oidc')
      .then(async (status) => {
        if (!live) return;
        setOidc(status);
        if (!status.enabled) return;
        await api('GET', '/api/v1/sys/whoami');
        if (!live) return;
        setProviderSession();
        onDone();
      })
      .catch(() => {}); // no session (401), or an older server: the gate stays as it is
    return () => {
      live = false;
    };
  }, []);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setToken(token.trim());
    try {
      await api('GET', '/api/v1/sys/whoami');
      onDone();
    } catch (err) {
      clearToken();
      setError(err);
    }
  };
  return (
    <main className="signin">
      <form onSubmit={submit} aria-labelledby="signin-title">
        <h1 id="signin-title">Switchyard console</h1>
        {oidc?.enabled && (
          <>
            <a className="provider-signin" href={oidc.loginPath} data-testid="oidc-signin">
              Sign in with {oidc.providerName}
            </a>
            <p className="hint">Or with an admin token:</p>
          </>
        )}
        <label htmlFor="token">Admin token</label>
        <input id="token" type="password" autoComplete="off" value={token} onChange={(e) => setTokenInput(e.target.value)} required={!oidc?.enabled} autoFocus={!oidc?.enabled} />
        <p className="hint">A system token or a tenant sub-key (syk_…). It is kept in this tab's session storage only.</p>
        <button type="submit">Sign in</button>
        <ErrorBox error={error} testId="signin-error" />
      </form>
    </main>
  );
}
