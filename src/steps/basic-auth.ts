import * as v from 'valibot';
import { createHash, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { defineStep, type Flow, type StepOutcome } from './step.js';
import { headerSafe, stepError } from './reply.js';

/** `scrypt$N$r$p$<salt base64>$<hash base64>`; `switchyard` never stores a plaintext password. */
const SCRYPT = /^scrypt\$(\d+)\$(\d+)\$(\d+)\$([A-Za-z0-9+/=]+)\$([A-Za-z0-9+/=]+)$/;

interface User {
  name: string;
  N: number;
  r: number;
  p: number;
  salt: Buffer;
  hash: Buffer;
}

/**
 * HTTP Basic authentication against scrypt password hashes. scrypt is slow on purpose,
 * so a successful check is remembered (as a SHA-256 of the credentials, for `cacheSeconds`)
 * and repeat requests do not pay it again. 401 with WWW-Authenticate otherwise.
 */
export const basicAuth = defineStep({
  code: 'basic-auth',
  summary: 'HTTP Basic authentication against scrypt password hashes (401 with WWW-Authenticate)',
  statuses: [{ status: 401, when: 'missing or wrong credentials' }],
  example: { realm: 'ops', users: [{ username: 'alice', scrypt: 'scrypt$16384$8$1$c2FsdHNhbHRzYWx0c2FsdA==$ZmFrZWhhc2hmYWtlaGFzaGZha2VoYXNoZmFrZWhhc2g=' }] },
  schema: v.strictObject({
    realm: v.optional(v.pipe(v.string(), v.regex(/^[^"\\\r\n]*$/)), 'switchyard'),
    users: v.pipe(
      v.array(v.strictObject({ username: v.pipe(v.string(), v.regex(/^[^:\r\n]+$/)), scrypt: v.pipe(v.string(), v.regex(SCRYPT, 'must be scrypt$N$r$p$salt$hash (base64)')) })),
      v.minLength(1),
    ),
    consumerHeader: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z0-9-]+$/)), 'x-consumer-id'),
    cacheSeconds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(3600)), 60),
  }),
  ownedHeaders: (s) => [s.consumerHeader],
  create(s, { state }) {
    const users = new Map<string, User>(
      s.users.map((u) => {
        const m = SCRYPT.exec(u.scrypt)!;
        return [u.username, { name: u.username, N: Number(m[1]), r: Number(m[2]), p: Number(m[3]), salt: Buffer.from(m[4]!, 'base64'), hash: Buffer.from(m[5]!, 'base64') }];
      }),
    );
    // Shaped like the first user (same cost), with a random salt and hash nobody can match.
    const first = users.values().next().value!;
    const decoy: User = { ...first, name: '', salt: randomBytes(16), hash: randomBytes(first.hash.length) };
    // sha256(credentials) -> expiry; kept across publishes while the step is unchanged, so a publish costs no scrypt.
    const verified = state(() => new Map<string, number>());
    const denied = stepError('Svc.Data.Unauthenticated', 'Valid credentials are required', { 'www-authenticate': `Basic realm="${s.realm}", charset="UTF-8"` });
    const accept = (flow: Flow, user: string): undefined => {
      flow.vars.consumer = user;
      flow.setHeader(s.consumerHeader, headerSafe(user));
      flow.removeHeader('authorization');
      return undefined;
    };
    return (flow): StepOutcome | Promise<StepOutcome> => {
      const auth = flow.req.header('authorization');
      if (!auth || !/^basic /i.test(auth)) return denied;
      const decoded = Buffer.from(auth.slice(6).trim(), 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      if (colon < 1) return denied;
      const known = users.get(decoded.slice(0, colon));
      // An unknown user pays the same scrypt as a wrong password: the answer's timing must
      // not tell which user names exist.
      const user = known ?? decoy;
      const key = createHash('sha256').update(decoded).digest('base64');
      const until = verified.get(key);
      if (until !== undefined && until > Date.now()) return accept(flow, user.name);
      return new Promise((resolve) => {
        scrypt(decoded.slice(colon + 1), user.salt, user.hash.length, { N: user.N, r: user.r, p: user.p, maxmem: 256 * user.N * user.r + 1024 * 1024 }, (err, derived) => {
          if (err || !timingSafeEqual(derived, user.hash) || known === undefined) return resolve(denied);
          if (s.cacheSeconds > 0) {
            if (verified.size > 10_000) verified.clear();
            verified.set(key, Date.now() + s.cacheSeconds * 1000);
          }
          resolve(accept(flow, user.name));
        });
      });
    };
  },
});
