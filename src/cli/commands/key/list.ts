import { AdminCommand } from '../../admin-command.js';
import { seg } from '../../admin-client.js';

export default class KeyList extends AdminCommand {
  static override summary = "List the tenant's sub-keys: state, scopes, expiry, lastUsedAt (never the plaintext).";

  async run(): Promise<unknown> {
    return this.call('GET', `/api/v1/${seg(this.flags.tenant)}/key/list`);
  }
}
