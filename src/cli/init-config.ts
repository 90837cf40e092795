import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';

/** The variable `switchyard init` names for the root key: the token itself never reaches the file. */
export const ROOT_TOKEN_ENV = 'SWITCHYARD_ROOT_TOKEN';

export interface InitChoice {
  dataHost: string;
  dataPort: number;
  adminPort: number;
}

/** A worker.json for a first run: a SQLite file beside it, one `*` root key by variable. */
export function initialConfig(c: InitChoice): Record<string, unknown> {
  return {
    volume: 'virtual://switchyard.db',
    listen: { host: c.dataHost, port: c.dataPort },
    admin: { listen: `127.0.0.1:${c.adminPort}`, keys: [{ id: 'root', tokenEnv: ROOT_TOKEN_ENV, scopes: ['*'] }] },
  };
}

/** A root token: 32 random bytes, base64url (43 characters). */
export const newRootToken = (): string => randomBytes(32).toString('base64url');

/** `preferred` when it can be bound on `host` right now, else a port the kernel picks. */
export async function portOr(preferred: number, host: string): Promise<number> {
  const bind = (port: number) =>
    new Promise<number | null>((resolve) => {
      const srv = createServer();
      srv.once('error', () => resolve(null));
      srv.listen({ host, port, exclusive: true }, () => {
        const got = (srv.address() as { port: number }).port;
        srv.close(() => resolve(got));
      });
    });
  return (await bind(preferred)) ?? (await bind(0))!;
}
