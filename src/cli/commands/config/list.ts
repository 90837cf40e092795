import { AdminCommand } from '../../admin-command.js';
import { kindArg } from '../../entity-args.js';
import type { View } from '../../output/human.js';
import { seg } from '../../admin-client.js';

export default class ConfigList extends AdminCommand {
  static override summary = 'List the entities of a kind with their state.';
  static override examples = [
    '<%= config.bin %> config list route',
    '<%= config.bin %> config list cluster --json name,state',
  ];
  static override view: View = { columns: ['name', 'state', 'pending', 'publishedGeneration', 'logicalAddress'] };
  static override args = { kind: kindArg };

  async run(): Promise<unknown> {
    return this.call('GET', `/api/v1/${seg(await this.tenant())}/config/list/${seg(this.args.kind!)}`);
  }
}
