import { Args } from '@oclif/core';
import { AdminCommand } from '../../admin-command.js';
import { seg } from '../../admin-client.js';

export default class PluginEnable extends AdminCommand {
  static override summary = 'Enable a step for the tenant; the next dry-run or publish applies it.';
  static override examples = [
    '<%= config.bin %> plugin enable fault-injection',
  ];
  static override args = { code: Args.string({ required: true, description: 'a step code, as plugin list shows them (e.g. rate-limit, key-auth)' }) };

  async run(): Promise<unknown> {
    return this.call('POST', `/api/v1/${seg(await this.tenant())}/plugin/enable/${seg(this.args.code!)}`);
  }
}
