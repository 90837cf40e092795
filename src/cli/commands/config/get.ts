import { AdminCommand } from '../../admin-command.js';
import { kindArg, nameArg } from '../../entity-args.js';
import { seg } from '../../admin-client.js';

export default class ConfigGet extends AdminCommand {
  static override summary = 'Show an entity: its draft and published versions side by side.';
  static override examples = [
    '<%= config.bin %> config get route api',
    '<%= config.bin %> config get cluster api --json draft',
  ];
  static override args = {
    kind: kindArg,
    name: nameArg,
  };

  async run(): Promise<unknown> {
    return this.call('GET', `/api/v1/${seg(await this.tenant())}/config/get/${seg(this.args.kind!)}/${seg(this.args.name!)}`);
  }
}
