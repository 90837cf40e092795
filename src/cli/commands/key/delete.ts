import { Args } from '@oclif/core';
import { AdminCommand } from '../../admin-command.js';
import { seg } from '../../admin-client.js';

export default class KeyDelete extends AdminCommand {
  static override summary = "Delete a sub-key's record.";
  static override examples = [
    '<%= config.bin %> key delete key_UrWBbxSdw4FjBKah --tenant acme',
  ];
  static override args = { id: Args.string({ required: true, description: 'the key id (key list shows them)' }) };

  async run(): Promise<unknown> {
    return this.call('POST', `/api/v1/${seg(await this.tenant())}/key/delete/${seg(this.args.id as string)}`);
  }
}
