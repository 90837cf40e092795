import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './helpers/gateway.js';
import { runCli } from './helpers/cli.js';
import { BOUNDED } from './helpers/wait.js';

test('switchyard --help describes every command topic (config, publish, plugin, key, audit)', BOUNDED, async () => {
  // Regression: the topics were listed without a word on what they do.
  const commands = join(ROOT, 'src', 'cli', 'commands');
  const topics = readdirSync(commands).filter((n) => statSync(join(commands, n)).isDirectory());
  assert.ok(topics.length >= 5, `topics found: ${topics.join(', ')}`);
  const described = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).oclif.topics as Record<string, { description: string }>;
  const help = await runCli(['--help']);
  assert.equal(help.code, 0, help.stderr);
  const section = help.stdout.split(/^TOPICS$/m)[1]?.split(/^COMMANDS$/m)[0] ?? '';
  const flat = section.replace(/\s+/g, ' ');
  for (const topic of topics) {
    const text = described[topic]?.description;
    assert.ok(text, `package.json oclif.topics.${topic} has a description`);
    assert.ok(flat.includes(`${topic} ${text.replace(/\s+/g, ' ')}`), `--help shows "${topic}" with its description; TOPICS was:\n${section}`);
  }
});
