import { test } from 'node:test';
import assert from 'node:assert/strict';
import { normalizePath, type PathPolicy } from '../../src/shared/normalize-path.js';

const KEEP: PathPolicy = { escapedSlashes: 'keep', mergeSlashes: true };
const DECODE: PathPolicy = { escapedSlashes: 'decode', mergeSlashes: true };
const NO_MERGE: PathPolicy = { escapedSlashes: 'reject', mergeSlashes: false };

test('dot segments are resolved, encoded dots included', () => {
  assert.equal(normalizePath('/a/../b'), '/b');
  assert.equal(normalizePath('/a/./b'), '/a/b');
  assert.equal(normalizePath('/a/%2e%2e/admin'), '/admin');
  assert.equal(normalizePath('/a/%2E%2E/%2e/x'), '/x');
  assert.equal(normalizePath('/x/%2E./admin-api'), '/admin-api');
  assert.equal(normalizePath('/x/.%2e/admin-api'), '/admin-api');
  assert.equal(normalizePath('/../../etc'), '/etc');
  assert.equal(normalizePath('/a/b/..'), '/a/');
  assert.equal(normalizePath('/a/.'), '/a/');
  assert.equal(normalizePath('/..'), '/');
  assert.equal(normalizePath('/admin-api/../public'), '/public');
  assert.equal(normalizePath('/public/../admin-api'), '/admin-api');
});

test('paths already normal are returned as they are', () => {
  for (const p of ['/', '/api/v1/users', '/file.txt', '/a%20b', '/a..b/c', '/.well-known/x', '/a;b=1/c', '/...', '/a./b.', "/(x)!$'*@:,=+&"]) {
    assert.equal(normalizePath(p), p);
  }
});

test('percent-encoded unreserved characters are decoded; other encodings get upper-case hex', () => {
  assert.equal(normalizePath('/%61dmin-api'), '/admin-api');
  assert.equal(normalizePath('/admin%2dapi/users'), '/admin-api/users');
  assert.equal(normalizePath('/admin%2Dapi'), '/admin-api');
  assert.equal(normalizePath('/%41DMIN-API'), '/ADMIN-API');
  assert.equal(normalizePath('/%7euser/%5f%30'), '/~user/_0');
  assert.equal(normalizePath('/a%20b%3f%23%25'), '/a%20b%3F%23%25');
  assert.equal(normalizePath('/caf%c3%a9'), '/caf%C3%A9');
  assert.equal(normalizePath('/%e2%82%ac/%F0%9F%98%80'), '/%E2%82%AC/%F0%9F%98%80');
});

test('non-ASCII characters (uWS decodes the target as UTF-8) are sent percent-encoded', () => {
  assert.equal(normalizePath('/café'), '/caf%C3%A9');
  assert.equal(normalizePath('/😀/x'), '/%F0%9F%98%80/x');
  assert.equal(normalizePath('/a\ufffdb'), null, 'bytes uWS could not decode');
});

test('refused: NUL, malformed percent-encodings, bytes that are not UTF-8, control characters, #', () => {
  for (const p of [
    '/a%00',
    '/%00/x',
    '/a%zz',
    '/a%4',
    '/a%',
    '/a%g0',
    '/%C0%AE%C0%AE/admin-api', // overlong '.'
    '/%c0%af',
    '/%e0%80%af', // overlong
    '/%ed%a0%80', // a surrogate
    '/%f4%90%80%80', // past U+10FFFF
    '/%f5%80%80%80',
    '/%80',
    '/%c3',
    '/%c3x',
    '/%c3/',
    '/%e2%82',
    '/a\u0001b',
    '/a\u007fb',
    '/a\tb',
    '/a#b',
    '',
    'a/b',
    '*',
  ]) {
    assert.equal(normalizePath(p), null, p);
  }
});

test('escaped slashes: refused by default, kept encoded (never a separator), or decoded before dot segments', () => {
  for (const p of ['/a%2Fb', '/a%2fb', '/a%5Cb', '/a%5cb', '/a\\b', '/%2Fadmin-api', '/x%2F..%2Fadmin-api']) assert.equal(normalizePath(p), null, p);
  assert.equal(normalizePath('/a%2fb', KEEP), '/a%2Fb');
  assert.equal(normalizePath('/a%5cb', KEEP), '/a%5Cb');
  assert.equal(normalizePath('/a\\b', KEEP), '/a%5Cb');
  assert.equal(normalizePath('/x%2F..%2Fadmin-api', KEEP), '/x%2F..%2Fadmin-api', 'one segment: no dot segment in it');
  assert.equal(normalizePath('/x/..%2Fadmin-api', KEEP), '/x/..%2Fadmin-api');
  assert.equal(normalizePath('/a%2fb', DECODE), '/a/b');
  assert.equal(normalizePath('/a\\b', DECODE), '/a/b');
  assert.equal(normalizePath('/x%2F..%2Fadmin-api', DECODE), '/admin-api');
  assert.equal(normalizePath('/x/..%2Fadmin-api', DECODE), '/admin-api');
  assert.equal(normalizePath('/public\\..\\admin', DECODE), '/admin');
  assert.equal(normalizePath('/%2Fadmin-api', DECODE), '/admin-api', 'decoded, then merged');
});

test('slashes are merged by default (before dot segments, as nginx does); mergeSlashes false keeps them', () => {
  assert.equal(normalizePath('//admin-api'), '/admin-api');
  assert.equal(normalizePath('///admin-api//x//'), '/admin-api/x/');
  assert.equal(normalizePath('/a//../b'), '/b');
  assert.equal(normalizePath('//admin-api', NO_MERGE), '/admin-api', 'a leading // is merged anyway: WHATWG parsers read //x/… as host x');
  assert.equal(normalizePath('///x/a', NO_MERGE), '/x/a');
  assert.equal(normalizePath('/a//b/', NO_MERGE), '/a//b/');
  assert.equal(normalizePath('/a//../b', NO_MERGE), '/a/b', 'RFC 3986: .. removes the empty segment');
});

test('the normal form is a fixed point, under every policy', () => {
  const samples = ['/a/../b', '/%61/%2e%2E/x', '/caf%c3%a9/', '//a//b', '/a%2fb/../c', '/a\\..\\b', '/x/./y/.', '/ü/%7e'];
  for (const policy of [undefined, KEEP, DECODE, NO_MERGE]) {
    for (const p of samples) {
      const once = normalizePath(p, policy);
      if (once !== null) assert.equal(normalizePath(once, policy), once, `${p} under ${JSON.stringify(policy)}`);
    }
  }
});
