import { Args } from '@oclif/core';
import { AdminCommand } from '../../admin-command.js';
import { seg } from '../../admin-client.js';

export default class KeyRevoke extends AdminCommand {
  static override summary = "Revoke a sub-key: it is refused from the next request on.";
  static override examples = [
    '<%= config.bin %> key revoke key_UrWBbxSdw4FjBKah --tenant acme',
  ];
  static override args = { id: Args.string({ required: true, description: 'the key id (key list shows them)' }) };

  async run(): Promise<unknown> {
    return this.call('POST', `/api/v1/${seg(await this.tenant())}/key/revoke/${seg(this.args.id as string)}`);
  }
}
