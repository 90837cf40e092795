import { KINDS } from '../../../contracts/entities.js';
import { Args } from '@oclif/core';
import { AdminCommand } from '../../admin-command.js';
import { seg } from '../../admin-client.js';

export default class ConfigList extends AdminCommand {
  static override summary = 'List the entities of a kind with their state.';
  static override args = { kind: Args.string({ required: true, options: [...KINDS] }) };

  async run(): Promise<unknown> {
    return this.call('GET', `/api/v1/${seg(this.flags.tenant)}/config/list/${seg(this.args.kind!)}`);
  }
}
