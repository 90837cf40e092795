import { useEffect, useState } from 'react';
import { api, ApiError, onUnauthorized } from './api';
import { clearToken, getToken, usesProviderSession } from './session';
import { ModelProvider, type ConsoleModel } from './gate';
import { go, useHashLocation } from './hash-route';
import { ErrorBox } from './components';
import { SignIn } from './SignIn';
import { Overview } from './views/Overview';
import { Entities } from './views/Entities';
import { Certificates } from './views/Certificates';
import { Publish } from './views/Publish';
import { Explain } from './views/Explain';
import { Keys } from './views/Keys';
import { Plugins } from './views/Plugins';
import { Audit } from './views/Audit';

const TENANT_KEY = 'switchyard.tenant';

export function App() {
  const [signedIn, setSignedIn] = useState(() => getToken() !== null || usesProviderSession());
  /** Why the session ended, when the server ended it (a 401 on any call). */
  const [ended, setEnded] = useState<unknown>(null);
  if (!signedIn) return <SignIn reason={ended} onDone={() => setSignedIn(true)} />;
  return (
    <Shell
      onSignOut={async (reason) => {
        // A sign-out the operator asked for ends the server's session too (a refused one is over already).
        const next = reason === undefined && usesProviderSession() ? await endProviderSession() : null;
        clearToken();
        sessionStorage.removeItem(TENANT_KEY);
        if (next !== null) return location.assign(next);
        location.hash = '';
        setEnded(reason ?? null);
        setSignedIn(false);
      }}
    />
  );
}

/** Ends the console session on the server; the answer may name the provider's logout page. */
async function endProviderSession(): Promise<string | null> {
  try {
    return (await api<{ endSessionUrl: string | null }>('POST', '/api/v1/sys/oidc/logout')).endSessionUrl;
  } catch {
    return null; // already ended (401): nothing more to end
  }
}

function Shell({ onSignOut }: { onSignOut: (reason?: unknown) => void }) {
  // The tenant asked for; it is kept (and survives a reload) only once the server accepted
  // it: a refused name stored at once left the tab on an error page with no way out.
  const [asked, setAsked] = useState<{ tenant: string; n: number; note?: unknown }>(() => ({ tenant: sessionStorage.getItem(TENANT_KEY) ?? 'default', n: 0 }));
  const [model, setModel] = useState<ConsoleModel | null>(null);
  const [error, setError] = useState<unknown>(null);
  const loc = useHashLocation();

  useEffect(() => onUnauthorized((e) => onSignOut(e)), []);

  useEffect(() => {
    api<ConsoleModel>('GET', `/api/v1/sys/console?tenant=${encodeURIComponent(asked.tenant)}`).then(
      (m) => {
        sessionStorage.setItem(TENANT_KEY, asked.tenant);
        setModel(m);
        setError(asked.note ?? null); // after a fallback: why the stored tenant was left
      },
      (e) => {
        if (e instanceof ApiError && e.status === 401) return; // signed out by onUnauthorized
        setError(e);
        // No model yet (a stored tenant the server now refuses): back to the default tenant.
        if (model === null && asked.tenant !== 'default') {
          sessionStorage.removeItem(TENANT_KEY);
          setAsked({ tenant: 'default', n: asked.n + 1, note: e });
        }
      },
    );
  }, [asked]);

  if (!model) return <main className="loading">{error ? <ErrorBox error={error} /> : 'Loading…'}</main>;
  const current = model.nav.find((n) => n.id === loc.view)?.id ?? model.nav[0]?.id ?? null;

  return (
    <ModelProvider value={model}>
      <div className="shell">
        <header className="top">
          <span className="brand">Switchyard</span>
          <span className="who" data-testid="identity">
            {model.identity.signedInAs ? `signed in as ${model.identity.signedInAs}` : `${model.identity.kind} key`}
            {model.identity.tenant ? ` · tenant ${model.identity.tenant}` : ''}
          </span>
          {model.tenantSelectable ? (
            <form
              className="tenant"
              onSubmit={(e) => {
                e.preventDefault();
                const v = String(new FormData(e.currentTarget).get('tenant') ?? '').trim();
                if (v) setAsked((a) => ({ tenant: v, n: a.n + 1 }));
              }}
            >
              <label htmlFor="tenant-input">Tenant</label>
              <input id="tenant-input" name="tenant" defaultValue={model.tenant} data-testid="tenant-input" />
              <button type="submit">Switch</button>
            </form>
          ) : (
            <span className="tenant" data-testid="tenant-fixed">
              Tenant {model.tenant}
            </span>
          )}
          <button className="signout" onClick={() => onSignOut()}>
            Sign out
          </button>
        </header>
        <nav aria-label="Views" className="side">
          <ul>
            {model.nav.map((n) => (
              <li key={n.id}>
                <a href={`#/${n.id}`} aria-current={n.id === current ? 'page' : undefined} data-testid={`nav-${n.id}`}>
                  {n.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <main className="content">
          <ErrorBox error={error} />
          <View id={current} arg={loc.arg} tenant={model.tenant} />
        </main>
      </div>
    </ModelProvider>
  );
}

function View({ id, arg, tenant }: { id: string | null; arg: string | null; tenant: string }) {
  switch (id) {
    case 'overview':
      return <Overview tenant={tenant} />;
    case 'clusters':
      return <Entities key={`cluster-${tenant}`} kind="cluster" tenant={tenant} selected={arg} />;
    case 'routes':
      return <Entities key={`route-${tenant}`} kind="route" tenant={tenant} selected={arg} />;
    case 'chains':
      return <Entities key={`orch-${tenant}`} kind="orch" tenant={tenant} selected={arg} />;
    case 'certificates':
      return <Certificates key={`cert-${tenant}`} tenant={tenant} selected={arg} />;
    case 'explain':
      return <Explain key={`explain-${tenant}`} tenant={tenant} />;
    case 'publish':
      return <Publish tenant={tenant} />;
    case 'keys':
      return <Keys tenant={tenant} />;
    case 'plugins':
      return <Plugins tenant={tenant} />;
    case 'audit':
      return <Audit tenant={tenant} />;
    default:
      return <p>Nothing to show for this identity.</p>;
  }
}

export { go };
