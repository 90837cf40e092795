import { AdminCommand } from '../../admin-command.js';
import type { View } from '../../output/human.js';
import { seg } from '../../admin-client.js';

export default class KeyList extends AdminCommand {
  static override summary = "List the tenant's sub-keys: state, scopes, expiry, lastUsedAt (never the plaintext).";
  static override examples = [
    '<%= config.bin %> key list --tenant acme',
    '<%= config.bin %> key list --json id,state,expiresAt',
  ];
  static override view: View = { columns: ['id', 'name', 'state', 'scopes', 'expiresAt', 'lastUsedAt'] };

  async run(): Promise<unknown> {
    return this.call('GET', `/api/v1/${seg(await this.tenant())}/key/list`);
  }
}
