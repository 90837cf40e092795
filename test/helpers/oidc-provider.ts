import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import type { TestContext } from 'node:test';
import Provider, { type ClientMetadata, type Configuration } from 'oidc-provider';
import { freePort } from './ports.js';

/**
 * A real OpenID provider for the tests (panva's `oidc-provider`, certified), on
 * 127.0.0.1 at a port chosen at run time, issuer `http://127.0.0.1:<port>`.
 *
 * - Any login name signs in through its built-in login form (devInteractions); the
 *   account's claims are `sub` = the name, `email` = `<name>@example.test`, and `groups`
 *   from `groups` below (scope `groups`).
 * - `client_credentials` tokens: resource `urn:jwt` gives a JWT access token signed with
 *   the current key (audience `urn:jwt`), resource `urn:opaque` an opaque one (checked at
 *   the introspection endpoint, revocable at the revocation endpoint).
 * - `rotate()` restarts the provider on the same port with a new signing key (a new
 *   `kid`); `stop()` / `start()` take it off the port and back.
 * - `hits` counts requests by path (discovery, jwks, introspection…).
 */
export interface TestProvider {
  readonly issuer: string;
  readonly port: number;
  /** Requests served by path (without query), since the fixture started. */
  readonly hits: Map<string, number>;
  /** The current signing key's id. */
  readonly kid: string;
  /** A client_credentials access token for `resource` ('urn:jwt' or 'urn:opaque'), asked as `clientId`. */
  token(resource: 'urn:jwt' | 'urn:opaque', scope?: string, clientId?: string): Promise<string>;
  /** Revokes a token at the revocation endpoint. */
  revoke(token: string, clientId?: string): Promise<void>;
  /** A new signing key (new kid); the old one is no longer published. */
  rotate(): Promise<void>;
  stop(): Promise<void>;
  start(): Promise<void>;
}

export interface TestProviderOptions {
  /** Clients besides the built-in `gw-api` (secret `gw-api-secret`: client_credentials, introspection). */
  clients?: ClientMetadata[];
  /** Groups per login name (claim `groups`, scope `groups`). */
  groups?: Record<string, string[]>;
  /** Seconds an access token / ID token lives (default 3600). */
  accessTokenTtl?: number;
  idTokenTtl?: number;
  /** Signing algorithm of JWT access tokens and ID tokens (default RS256). */
  alg?: 'RS256' | 'PS256' | 'ES256' | 'EdDSA';
}

export const API_CLIENT = { client_id: 'gw-api', client_secret: 'gw-api-secret' } as const;

function signingKey(alg: string): Record<string, unknown> {
  const kid = `k-${randomUUID().slice(0, 8)}`;
  const pair =
    alg === 'ES256'
      ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
      : alg === 'EdDSA'
        ? generateKeyPairSync('ed25519')
        : generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { ...pair.privateKey.export({ format: 'jwk' }), kid, use: 'sig', alg };
}

export async function startProvider(t: TestContext, options: TestProviderOptions = {}): Promise<TestProvider> {
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const alg = options.alg ?? 'RS256';
  const hits = new Map<string, number>();
  let key = signingKey(alg);
  let server: Server | null = null;
  const sockets = new Set<Socket>();

  const configuration = (): Configuration => ({
    clients: [
      {
        ...API_CLIENT,
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
        // The provider's default (RS256) is refused when only `alg` is enabled (PS256).
        id_token_signed_response_alg: alg,
      },
      ...(options.clients ?? []),
    ],
    jwks: { keys: [key as never] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], groups: ['groups'] },
    conformIdTokenClaims: false,
    findAccount: (_ctx, sub) => ({
      accountId: sub,
      claims: () => ({ sub, email: `${sub}@example.test`, email_verified: true, groups: options.groups?.[sub] ?? [] }),
    }),
    scopes: ['openid', 'offline_access', 'email', 'groups', 'orders:read', 'orders:write'],
    issueRefreshToken: (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    ttl: {
      AccessToken: options.accessTokenTtl ?? 3600,
      ClientCredentials: options.accessTokenTtl ?? 3600,
      IdToken: options.idTokenTtl ?? 3600,
      RefreshToken: 86_400,
      Session: 86_400,
      Grant: 86_400,
      Interaction: 600,
    },
    enabledJWA: { idTokenSigningAlgValues: [alg], authorizationSigningAlgValues: [alg] } as never,
    features: {
      devInteractions: { enabled: true },
      clientCredentials: { enabled: true },
      introspection: { enabled: true, allowedPolicy: async () => true },
      revocation: { enabled: true, allowedPolicy: async () => true },
      rpInitiatedLogout: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => 'urn:opaque',
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resource) => ({
          scope: 'orders:read orders:write',
          audience: resource,
          accessTokenFormat: resource === 'urn:jwt' ? 'jwt' : 'opaque',
          ...(resource === 'urn:jwt' ? { jwt: { sign: { alg } } } : {}),
        }),
      },
    },
    pkce: { required: () => true },
  });

  let provider = new Provider(issuer, configuration());
  const silence = (p: Provider): void => {
    p.on('server_error', () => {});
  };
  silence(provider);

  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    const path = (req.url ?? '/').split('?')[0]!;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    provider.callback()(req, res);
  };

  const start = async (): Promise<void> => {
    if (server) return;
    server = createServer(handler);
    server.on('connection', (s: Socket) => {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    });
    await new Promise<void>((resolve, reject) => {
      server!.once('error', reject);
      server!.listen(port, '127.0.0.1', () => resolve());
    });
  };
  const stop = async (): Promise<void> => {
    const s = server;
    if (!s) return;
    server = null;
    for (const socket of sockets) socket.destroy();
    await new Promise((r) => s.close(r));
  };

  const basic = (clientId: string, secret: string): string => `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString('base64')}`;
  const secretOf = (clientId: string): string => {
    if (clientId === API_CLIENT.client_id) return API_CLIENT.client_secret;
    const c = options.clients?.find((x) => x.client_id === clientId);
    if (!c?.client_secret) throw new Error(`no secret for client ${clientId}`);
    return c.client_secret;
  };

  await start();
  t.after(stop);

  return {
    issuer,
    port,
    hits,
    get kid() {
      return key.kid as string;
    },
    async token(resource, scope = 'orders:read', clientId = API_CLIENT.client_id) {
      const res = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: { authorization: basic(clientId, secretOf(clientId)), 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'client_credentials', resource, scope }).toString(),
      });
      const body = (await res.json()) as { access_token?: string; error?: string; error_description?: string };
      if (!body.access_token) throw new Error(`token: ${res.status} ${body.error} ${body.error_description}`);
      return body.access_token;
    },
    async revoke(token, clientId = API_CLIENT.client_id) {
      const res = await fetch(`${issuer}/token/revocation`, {
        method: 'POST',
        headers: { authorization: basic(clientId, secretOf(clientId)), 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token }).toString(),
      });
      if (res.status !== 200) throw new Error(`revocation: ${res.status} ${await res.text()}`);
    },
    async rotate() {
      key = signingKey(alg);
      provider = new Provider(issuer, configuration());
      silence(provider);
    },
    stop,
    start,
  };
}
