import { test } from 'node:test';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import assert from 'node:assert/strict';
import { decodeFormComponent, formatQuery, parseQuery, queryValue, semicolonPairs } from '../../src/shared/url-query.js';
import { parseCookies } from '../../src/shared/cookie-header.js';
import { PHP } from '../helpers/php-upstream.js';
import { credentialScanner, foldName, withoutSegments } from '../../src/shared/query-credential.js';

/** Queries whose reading differs between naive splitting and WHATWG form-urlencoding. */
const QUERIES = [
  'a=1&b=2',
  'api_key=x&api%5Fkey=y',
  '%61pi_key=1',
  'a+b=c+d',
  'a%2Bb=c%2bd',
  'a=%zz&b=%4',
  'a=%',
  '=x&y=&z',
  'a=1&&b=2&',
  'x=%C3%A9&y=%C3&z=%ED%A0%80',
  'a=b=c',
  'a;b=c&d=e;f',
  '%26=%3D&%3D=%26',
  'k=%00',
  '%FF=%fe&%E2%82=%E2%82%AC&a%=%%41&%7F%80=1',
  'k=\u00e9\u{1F600}',
];

test('parseQuery reads every name and value as URLSearchParams does, and keeps each segment as sent', () => {
  for (const q of QUERIES) {
    const pairs = parseQuery(q);
    const ours = pairs.filter((p) => p.raw !== '').map((p) => [p.name, p.value]);
    assert.deepEqual(ours, [...new URLSearchParams(q)], q);
    assert.equal(pairs.map((p) => p.raw).join('&'), q, `${q}: the segments rebuild the query byte for byte`);
    assert.equal(formatQuery(pairs), [...new URLSearchParams(q)].length === 0 ? null : q, `${q}: formatQuery`);
  }
  assert.deepEqual(parseQuery(null), []);
  assert.deepEqual(parseQuery(''), []);
  assert.equal(formatQuery(parseQuery('&&')), null, 'only empty segments: no query');
});

test('decodeFormComponent: `+` as a space, valid escapes decoded, invalid ones kept, nothing to do returns the same string', () => {
  assert.equal(decodeFormComponent('a+b%20c'), 'a b c');
  assert.equal(decodeFormComponent('%zz%41'), '%zzA');
  assert.equal(decodeFormComponent('%C3'), '\ufffd');
  const plain = 'plain_name';
  assert.equal(decodeFormComponent(plain), plain);
});

test('queryValue is URLSearchParams.get: the first pair of a decoded name', () => {
  const pairs = parseQuery('%74enant=a&tenant=b&empty');
  assert.equal(queryValue(pairs, 'tenant'), new URLSearchParams('%74enant=a&tenant=b').get('tenant'));
  assert.equal(queryValue(pairs, 'empty'), '');
  assert.equal(queryValue(pairs, 'none'), null);
});

test('semicolonPairs: the pairs a server that splits on `;` reads from one segment', () => {
  assert.deepEqual(semicolonPairs(parseQuery('a=1')[0]!).map((p) => [p.name, p.value]), [['a', '1']]);
  assert.deepEqual(semicolonPairs(parseQuery('a=1;%62=2;;c')[0]!).map((p) => [p.raw, p.name, p.value]), [['a=1', 'a', '1'], ['%62=2', 'b', '2'], ['', '', ''], ['c', 'c', '']]);
});

test('parseCookies: RFC 6265 pairs by the cookie package, first of a name wins, several lines one list', () => {
  assert.deepEqual({ ...parseCookies(['a=1; session=abc;b=2']) }, { a: '1', session: 'abc', b: '2' });
  assert.equal(parseCookies(['session=first; session=second']).session, 'first');
  assert.equal(parseCookies(['a=1', 'session=x%20y']).session, 'x y', 'two Cookie lines');
  assert.equal(parseCookies(['__proto__=x']).__proto__, 'x', 'a hostile name is just a name');
  assert.equal(parseCookies([]).a, undefined);
});

test('foldName: the names upstreams may take for the same (case, PHP `.`, space and `[`)', () => {
  for (const n of ['api_key', 'API_KEY', 'Api_Key', 'api.key', 'api key', ' api_key', 'api_key[]', 'api_key[0]', 'ap\u0131_key', 'api_\u212Aey']) assert.equal(foldName(n), 'api_key', n);
  assert.equal(foldName('\u017Fecret'), 'secret', 'ſ upper-cases to S');
  for (const n of ['apikey', 'api-key', 'xapi_key', '[api_key']) assert.notEqual(foldName(n), 'api_key', n);
});

/** Decoded names and what PHP 8's `$_GET` registers them as (php_register_variable_ex), lower-cased. */
const PHP_NAMES: [string, string][] = [
  ['api[key', 'api_key'],
  ['api_key\0', 'api_key'],
  ['api_key\0x[', 'api_key'],
  ['api[key\0]', 'api_key'],
  ['api[key.x', 'api_key_x'],
  ['api[key[x', 'api_key_x'],
  ['api[key]', 'api'],
  ['a[b]c', 'a'],
  ['api_key[', 'api_key_'],
  ['api_key]', 'api_key]'],
  ['  api.key', 'api_key'],
];

test('foldName: PHP reads an unclosed `[` as `_`, cuts at NUL; .NET decodes %uXXXX', () => {
  for (const [n, want] of PHP_NAMES) assert.equal(foldName(n), want, JSON.stringify(n));
  assert.equal(foldName('api%u005Fkey'), 'api_key');
  assert.equal(foldName('api%U005fKEY'), 'api_key');
  assert.equal(foldName('api%u5Fkey'), 'api%u5fkey', 'four hex digits or none');
});

test('foldName agrees with PHP itself on those names (when php is installed)', (t) => {
  if (!existsSync(PHP)) return t.skip(`${PHP} is not installed`);
  for (const [n, want] of PHP_NAMES) {
    const keys = JSON.parse(execFileSync(PHP, ['-n', '-r', 'parse_str($argv[1], $o); echo json_encode(array_keys($o));', `${encodeURIComponent(n)}=1`], { encoding: 'utf8' })) as string[];
    assert.deepEqual(keys.map((k) => k.toLowerCase()), [want], `PHP registers ${JSON.stringify(n)} as ${JSON.stringify(keys)}`);
  }
});

test('credentialScanner: every reading counts; a repeat or a `;` in its segment is ambiguous; the value is the one pair decoded', () => {
  const scan = credentialScanner('api_key');
  const at = (q: string) => scan(parseQuery(q));
  assert.deepEqual(at('a=1&b=2'), { segments: [], count: 0, ambiguous: false, value: null });
  assert.deepEqual(at('a=1&api%5Fkey=K%4E'), { segments: [1], count: 1, ambiguous: false, value: 'KN' });
  assert.deepEqual(at('API_KEY=K'), { segments: [0], count: 1, ambiguous: false, value: 'K' }, 'nginx reads a raw name in any case');
  for (const q of ['api_key=a&api%5Fkey=b', 'api_key=a&%61pi_key=a', 'api_key=a&API_KEY=b', 'api_key=a&api.key=b', 'api_key=a&api+key=b', 'api_key=a&api_key[]=b', 'api_key=a&api[key=b', 'api_key=a&api_key%00=b', 'api_key=a&api%u005Fkey=b', 'x=1;api_key=a', 'api_key=a;x=1', 'api_key=a;api_key=b', 'api_key&api_key=a']) {
    const r = at(q);
    assert.ok(r.ambiguous && r.value === null, q);
  }
  assert.equal(at('%E2%84%AApi_key=a&api_key=b').count, 1, 'a non-ASCII first letter that is no a');
  assert.equal(at('api_%E2%84%AAey=a&api_key=b').count, 2, 'the Kelvin sign lower-cases to k');
  assert.equal(at('%20%20api_key=a&api_key=b').count, 2, 'leading spaces (PHP)');
  assert.equal(at('%09api_key=a&api_key=b').count, 1, 'a tab is no space to PHP');
  assert.equal(at('api_keyx=a&xapi_key=b&api_ke=c&api_key]=d').count, 0);
  assert.equal(at('api_key=a&%2561pi_key=b').count, 1, 'a name encoded twice decodes once to %61pi_key: no credential');
  const pairs = parseQuery('a=1&api_key=k&&b=2;api_key=x');
  assert.equal(formatQuery(withoutSegments(pairs, scan(pairs).segments)), 'a=1&');
  assert.equal(formatQuery(withoutSegments(parseQuery('api_key=k'), [0])), null);
});
