import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isHashedAsset } from '../../src/admin/console-static.js';

test('regression: only files in the console folder’s own assets/ count as hashed, wherever the gateway is installed', () => {
  const root = '/opt/assets/switchyard/dist/console/';
  assert.equal(isHashedAsset(root, '/opt/assets/switchyard/dist/console/index.html'), false);
  assert.equal(isHashedAsset(root, '/opt/assets/switchyard/dist/console/assets/index-3f2a.js'), true);
  assert.equal(isHashedAsset('/srv/dist/console/', '/srv/dist/console/index.html'), false);
  assert.equal(isHashedAsset('/srv/dist/console/', '/srv/dist/console/assets/app-1.css'), true);
});
