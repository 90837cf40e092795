import { KINDS } from '../../../contracts/entities.js';
import { Args } from '@oclif/core';
import { AdminCommand } from '../../admin-command.js';
import { seg } from '../../admin-client.js';

export default class ConfigDelete extends AdminCommand {
  static override summary = 'Stage the removal of an entity; the next publish applies it.';
  static override args = {
    kind: Args.string({ required: true, options: [...KINDS] }),
    name: Args.string({ required: true }),
  };

  async run(): Promise<unknown> {
    return this.call('POST', `/api/v1/${seg(await this.tenant())}/config/delete/${seg(this.args.kind!)}/${seg(this.args.name!)}`);
  }
}
