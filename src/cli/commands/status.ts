import { AdminCommand } from '../admin-command.js';

export default class Status extends AdminCommand {
  static override summary = 'Show the supervisor, the generation served and every worker (needs cluster:read).';

  async run(): Promise<unknown> {
    return this.call('GET', '/api/v1/sys/cluster/status');
  }
}
