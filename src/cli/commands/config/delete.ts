import { AdminCommand } from '../../admin-command.js';
import { kindArg, nameArg } from '../../entity-args.js';
import { seg } from '../../admin-client.js';

export default class ConfigDelete extends AdminCommand {
  static override summary = 'Stage the removal of an entity; the next publish applies it.';
  static override examples = [
    '<%= config.bin %> config delete route ping && <%= config.bin %> publish go',
  ];
  static override args = {
    kind: kindArg,
    name: nameArg,
  };

  async run(): Promise<unknown> {
    return this.call('POST', `/api/v1/${seg(await this.tenant())}/config/delete/${seg(this.args.kind!)}/${seg(this.args.name!)}`);
  }
}
