import { semicolonPairs, type QueryPair } from './url-query.js';

/**
 * A name as any common upstream might take it for another: case folded both ways, upper then
 * lower (nginx's `$arg_name` matches raw names case-insensitively; .NET compares upper-cased,
 * where the dotless `ı` is an I and `ſ` an S), `%uXXXX`
 * decoded (.NET Framework's HttpUtility), and as PHP's `$_GET` registers it
 * (php_register_variable_ex): cut at a NUL, leading spaces dropped, `.` and space as `_`;
 * at the first `[`, the part before it when a `]` follows (`api_key[]` is the array
 * `api_key`), else that `[` as `_` and every later space, `.` or `[` too (`api[key` is `api_key`).
 */
export function foldName(name: string): string {
  let s = name.indexOf('%') === -1 ? name : name.replace(PERCENT_U, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  const nul = s.indexOf('\0');
  if (nul !== -1) s = s.slice(0, nul);
  s = s.replace(/^ +/, '').toUpperCase().toLowerCase();
  const bracket = s.indexOf('[');
  if (bracket > 0) s = s.indexOf(']', bracket + 1) !== -1 ? s.slice(0, bracket) : `${s.slice(0, bracket)}_${s.slice(bracket + 1).replace(/[ .[]/g, '_')}`;
  return s.replace(/[ .]/g, '_');
}

/** .NET Framework's non-standard escape of one UTF-16 unit. */
const PERCENT_U = /%u([0-9a-f]{4})/gi;

/**
 * Whether `s.slice(0, end)` folds to `want` (foldName's result), compared in place: most
 * names differ at their first characters, and no name is copied (a hostile 8 KiB query of
 * 1,638 pairs took 827 µs to parse and scan with foldName per name, 178 µs this way). A
 * name with what only foldName reads right (`%u`, `[`, NUL, non-ASCII) takes the slow way
 * where its start matched: 8 KiB of `api%u005Fk=1` pairs scan in 0.75–0.95 ms (parsing them takes 5 ms).
 */
function foldsTo(s: string, end: number, want: string): boolean {
  let i = 0;
  while (i < end && s.charCodeAt(i) === 0x20) i++;
  if (end - i < want.length) return false;
  for (let j = 0; j < want.length; j++, i++) {
    let c = s.charCodeAt(i);
    if (c > 0x7f || c === 0x5b || c === 0 || percentU(s, i)) return foldName(s.slice(0, end)) === want; // non-ASCII case folding (the Kelvin sign is a k), PHP's `[` and NUL, .NET's %u
    if (c >= 0x41 && c <= 0x5a) c += 0x20;
    else if (c === 0x20 || c === 0x2e) c = 0x5f;
    if (c !== want.charCodeAt(j)) return false;
  }
  if (i === end) return true;
  const next = s.charCodeAt(i);
  // NUL ends the name to PHP; `api_key[…]` is the array api_key, `api_key[x` the name api_key_x.
  return next === 0 || ((next === 0x5b || percentU(s, i)) && foldName(s.slice(0, end)) === want);
}

/** Whether `s` has `%u` at `i` (a `%` otherwise is no escape foldName reads). */
const percentU = (s: string, i: number) => s.charCodeAt(i) === 0x25 && (s.charCodeAt(i + 1) | 0x20) === 0x75;

/** What a query holds of a credential parameter, under every reading an upstream may make of it. */
export interface CredentialScan {
  /** Indexes of the segments that carry it under some reading: what stripping removes. */
  readonly segments: readonly number[];
  /** How many pairs read as it, counted the way the most generous reader counts them. */
  readonly count: number;
  /** Readers split a segment that carries it differently (a `;` inside it), or it came more than once. */
  readonly ambiguous: boolean;
  /** The value of its one pair, decoded (WHATWG); null when the query does not carry it. */
  readonly value: string | null;
}

const NONE: CredentialScan = { segments: [], count: 0, ambiguous: false, value: null };

/**
 * The test, built once, of whether a pair reads as one of the parameters `names`: its
 * decoded name (URLSearchParams, node:querystring, fastify, PHP) or its raw name (nginx,
 * .NET's `%u`) folds to the same as one of them. key-auth and the access logs' redaction
 * judge names by it alike.
 */
export function credentialNames(names: readonly string[]): (p: QueryPair) => boolean {
  const wants = [...new Set(names.map(foldName))];
  return (p) => {
    if (p.raw === '') return false;
    const eq = p.raw.indexOf('=');
    const rawEnd = eq === -1 ? p.raw.length : eq;
    for (const want of wants) if (foldsTo(p.name, p.name.length, want) || foldsTo(p.raw, rawEnd, want)) return true;
    return false;
  };
}

/**
 * Builds, once per step, the scan for a credential parameter named `name`: a pair reads as
 * it by credentialNames, and a segment carries it when it or any of its `;`-separated parts
 * (Go before 1.17, Python's old cgi, Rack) is such a pair.
 */
export function credentialScanner(name: string): (pairs: readonly QueryPair[]) => CredentialScan {
  const readsAs = credentialNames([name]);
  return (pairs) => {
    let segments: number[] | null = null;
    let count = 0;
    let split = false;
    let value: string | null = null;
    for (let i = 0; i < pairs.length; i++) {
      const p = pairs[i]!;
      if (p.raw === '') continue;
      const parts = semicolonPairs(p);
      let hits = 0;
      for (const part of parts) if (readsAs(part)) hits++;
      if (hits === 0) continue;
      (segments ??= []).push(i);
      count += hits;
      if (parts.length > 1) split = true;
      value = p.value;
    }
    if (segments === null) return NONE;
    const ambiguous = split || count > 1;
    return { segments, count, ambiguous, value: ambiguous ? null : value };
  };
}

/** The segments without those at `drop` (indexes in order), as QueryPair for formatQuery. */
export function withoutSegments(pairs: readonly QueryPair[], drop: readonly number[]): QueryPair[] {
  const out: QueryPair[] = [];
  let d = 0;
  for (let i = 0; i < pairs.length; i++) {
    if (d < drop.length && drop[d] === i) d++;
    else out.push(pairs[i]!);
  }
  return out;
}
