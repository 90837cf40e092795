import { KINDS } from '../../../contracts/entities.js';
import { Args } from '@oclif/core';
import { AdminCommand } from '../../admin-command.js';
import { seg } from '../../admin-client.js';

export default class ConfigGet extends AdminCommand {
  static override summary = 'Show an entity: its draft and published versions side by side.';
  static override args = {
    kind: Args.string({ required: true, options: [...KINDS] }),
    name: Args.string({ required: true }),
  };

  async run(): Promise<unknown> {
    return this.call('GET', `/api/v1/${seg(await this.tenant())}/config/get/${seg(this.args.kind!)}/${seg(this.args.name!)}`);
  }
}
