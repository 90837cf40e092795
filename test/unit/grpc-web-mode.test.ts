import { test } from 'node:test';
import assert from 'node:assert/strict';
import { grpcUpstreamContentType, grpcWebContentType, grpcWebMode, grpcWebResponseMode, isGrpcContentType } from '../../src/worker/grpc/grpc-web-mode.js';

test('gRPC-Web modes by Content-Type: binary, text, with a +suffix or parameters; anything else is not gRPC-Web', () => {
  const cases: [string | undefined, 'binary' | 'text' | null][] = [
    ['application/grpc-web', 'binary'],
    ['application/grpc-web+proto', 'binary'],
    ['application/grpc-web+json', 'binary'],
    ['Application/GRPC-Web+Proto', 'binary'],
    ['application/grpc-web; charset=utf-8', 'binary'],
    ['application/grpc-web-text', 'text'],
    ['application/grpc-web-text+proto', 'text'],
    [' application/grpc-web-text+proto ;x=1', 'text'],
    ['application/grpc', null],
    ['application/grpc+proto', null],
    ['application/grpc-webx', null],
    ['application/grpc-web-textual', null],
    ['application/grpc-web+', null],
    ['text/plain', null],
    ['', null],
    [undefined, null],
  ];
  for (const [type, mode] of cases) assert.equal(grpcWebMode(type), mode, String(type));
});

test('the upstream Content-Type is application/grpc with the client\'s suffix', () => {
  assert.equal(grpcUpstreamContentType('application/grpc-web'), 'application/grpc');
  assert.equal(grpcUpstreamContentType('application/grpc-web+proto'), 'application/grpc+proto');
  assert.equal(grpcUpstreamContentType('application/grpc-web-text'), 'application/grpc');
  assert.equal(grpcUpstreamContentType('application/grpc-web-text+proto'), 'application/grpc+proto');
  assert.equal(grpcUpstreamContentType('application/grpc-web+json; charset=utf-8'), 'application/grpc+json');
});

test('the client\'s Content-Type follows the upstream\'s suffix (+proto when it has none) and the mode', () => {
  assert.equal(grpcWebContentType('application/grpc', 'binary'), 'application/grpc-web+proto');
  assert.equal(grpcWebContentType('application/grpc+proto', 'text'), 'application/grpc-web-text+proto');
  assert.equal(grpcWebContentType('application/grpc+json', 'binary'), 'application/grpc-web+json');
  assert.equal(grpcWebContentType(undefined, 'text'), 'application/grpc-web-text+proto');
  assert.equal(grpcWebContentType('text/html', 'binary'), 'application/grpc-web+proto');
});

test('a binary request gets a text answer when its Accept asks for one', () => {
  assert.equal(grpcWebResponseMode('text', undefined), 'text');
  assert.equal(grpcWebResponseMode('binary', undefined), 'binary');
  assert.equal(grpcWebResponseMode('binary', 'application/grpc-web-text'), 'text');
  assert.equal(grpcWebResponseMode('binary', 'text/html, application/grpc-web-text+proto'), 'text');
  assert.equal(grpcWebResponseMode('binary', 'application/grpc-web+proto, */*'), 'binary');
});

test('gRPC answers are told by their Content-Type', () => {
  assert.equal(isGrpcContentType('application/grpc'), true);
  assert.equal(isGrpcContentType('application/grpc+proto'), true);
  assert.equal(isGrpcContentType('application/grpc; charset=utf-8'), true);
  assert.equal(isGrpcContentType('application/grpc-web+proto'), false);
  assert.equal(isGrpcContentType('text/html'), false);
  assert.equal(isGrpcContentType(undefined), false);
});
