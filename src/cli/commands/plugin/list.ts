import { AdminCommand } from '../../admin-command.js';
import type { View } from '../../output/human.js';
import { seg } from '../../admin-client.js';

export default class PluginList extends AdminCommand {
  static override summary = 'List every built-in step with its settings schema and whether the tenant enabled it.';
  static override examples = [
    '<%= config.bin %> plugin list',
    '<%= config.bin %> plugin list --json code,enabled',
  ];
  static override view: View = { columns: ['code', 'enabled', 'summary'] };

  async run(): Promise<unknown> {
    return this.call('GET', `/api/v1/${seg(await this.tenant())}/plugin/list`);
  }
}
