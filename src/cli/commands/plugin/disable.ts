import { Args } from '@oclif/core';
import { AdminCommand } from '../../admin-command.js';
import { seg } from '../../admin-client.js';

export default class PluginDisable extends AdminCommand {
  static override summary = 'Disable a step for the tenant; the next dry-run or publish applies it.';
  static override args = { code: Args.string({ required: true }) };

  async run(): Promise<unknown> {
    return this.call('POST', `/api/v1/${seg(await this.tenant())}/plugin/disable/${seg(this.args.code!)}`);
  }
}
