import { Flags } from '@oclif/core';
import { AdminCommand } from '../../admin-command.js';
import { seg } from '../../admin-client.js';
import { readDocument } from '../../read-document.js';

export default class KeyIssue extends AdminCommand {
  static override summary = 'Issue a tenant sub-key; the answer holds the plaintext token, shown this once.';
  static override description =
    'Either --name and --scope (repeatable or comma-separated) with an optional --ttl, or the body {name, scopes, ttlSeconds?} from -f <file> or stdin.';
  static override examples = [
    '<%= config.bin %> key issue --tenant acme --name ci --scope config:read,publish:read --ttl 3600',
    'echo \'{"name":"ci","scopes":["config:read"]}\' | <%= config.bin %> key issue --tenant acme',
  ];
  static override flags = {
    name: Flags.string({ description: 'a label for the key' }),
    scope: Flags.string({ description: 'a scope to grant (repeatable, or comma-separated)', multiple: true }),
    ttl: Flags.integer({ description: 'lifetime in seconds (default: no expiry)', min: 1 }),
    file: Flags.string({ char: 'f', description: 'JSON body {name, scopes, ttlSeconds?} (default: stdin when --name is absent)' }),
  };

  async run(): Promise<unknown> {
    let body: unknown;
    if (this.flags.name !== undefined) {
      const scopes = ((this.flags.scope as string[] | undefined) ?? []).flatMap((s) => s.split(',')).map((s) => s.trim()).filter(Boolean);
      body = { name: this.flags.name, scopes, ...(this.flags.ttl !== undefined ? { ttlSeconds: this.flags.ttl } : {}) };
    } else {
      try {
        body = await readDocument(this.flags.file as string | undefined, `${this.config.bin} key issue --name ci --scope config:read`);
      } catch (err) {
        return this.fail('Cli.Input', (err as Error).message);
      }
    }
    return this.call('POST', `/api/v1/${seg(await this.tenant())}/key/issue`, body);
  }
}
