import { AdminCommand } from '../../admin-command.js';
import type { View } from '../../output/human.js';
import { seg } from '../../admin-client.js';

export default class PluginList extends AdminCommand {
  static override summary = 'List the steps the tenant may use (built-ins and allowed package steps) with their settings schema and whether it enabled each.';
  static override examples = [
    '<%= config.bin %> plugin list',
    '<%= config.bin %> plugin list --json code,enabled',
  ];
  static override view: View = { columns: ['code', 'enabled', 'package', 'summary'] };

  async run(): Promise<unknown> {
    return this.call('GET', `/api/v1/${seg(await this.tenant())}/plugin/list`);
  }
}
