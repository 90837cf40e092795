import { defineStep, v } from 'switchyard/step';
import { decodeSignature, sameSignature, sign, signedString } from './signature.js';

export { signedString, sign } from './signature.js';

const HeaderName = v.pipe(v.string(), v.regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, 'must be a header name'), v.toLowerCase());

const Settings = v.strictObject({
  /** The environment variable holding the shared key (worker.json `secrets.env` must allow it). */
  secretEnv: v.pipe(v.string(), v.regex(/^[A-Z_][A-Z0-9_]*$/, 'must be an environment variable name (A-Z, 0-9, _)')),
  header: v.optional(HeaderName, 'x-signature'),
  timestampHeader: v.optional(HeaderName, 'x-timestamp'),
  maxSkewSeconds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(3600)), 300),
  maxBodyBytes: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(16 * 1024 * 1024)), 1024 * 1024),
});

export type HmacSettings = v.InferOutput<typeof Settings>;

export default defineStep({
  code: 'hmac-signature',
  summary: 'Checks an HMAC-SHA256 signature over the method, path, timestamp and body of each request.',
  settings: Settings,
  answers: [
    { status: 401, code: 'Hmac.MissingSignature', when: 'The signature or timestamp header is missing' },
    { status: 401, code: 'Hmac.BadSignature', when: 'The signature does not match the request' },
    { status: 401, code: 'Hmac.Expired', when: 'The timestamp is outside the allowed clock skew' },
    { status: 413, code: 'Hmac.BodyTooLarge', when: 'The body is larger than the step reads to check it' },
  ],
  docs:
    'The client signs four lines joined by `\\n`: the method, the path with its query as sent, the timestamp header (Unix seconds) and the hex SHA-256 of the body. ' +
    'The signature header carries the HMAC-SHA256 of that string under the shared key, in hex or base64. A timestamp further than `maxSkewSeconds` from the gateway clock is refused, so a captured request cannot be replayed later.',
  example: { secretEnv: 'PARTNER_HMAC_KEY', maxSkewSeconds: 300 },
  secrets: (s) => [{ pointer: '/secretEnv', name: s.secretEnv }],
  create(s, env) {
    const key = env.secret(s.secretEnv);
    const missing = env.answer('Hmac.MissingSignature');
    const bad = env.answer('Hmac.BadSignature');
    const expired = env.answer('Hmac.Expired');
    const tooLarge = env.answer('Hmac.BodyTooLarge');
    return async (flow) => {
      // Fails closed: an unset key is the operator's error (500), never an open door.
      if (key === undefined || key === '') throw new Error(`${s.secretEnv} is not set`);
      const given = flow.req.header(s.header);
      const timestamp = flow.req.header(s.timestampHeader);
      if (given === undefined || timestamp === undefined) return missing;
      if (!/^\d{1,12}$/.test(timestamp)) return bad;
      if (Math.abs(Date.now() / 1000 - Number(timestamp)) > s.maxSkewSeconds) return expired;
      const signature = decodeSignature(given);
      if (signature === null) return bad;
      let body: Buffer;
      try {
        body = await flow.readBody(s.maxBodyBytes);
      } catch {
        return tooLarge;
      }
      const target = flow.req.query === null ? flow.req.path : `${flow.req.path}?${flow.req.query}`;
      const expected = sign(key, signedString(flow.req.method, target, timestamp, body));
      return sameSignature(signature, expected) ? undefined : bad;
    };
  },
});
