import { AdminCommand } from '../admin-command.js';

export default class Status extends AdminCommand {
  static override summary = 'Show the supervisor, the generation served and every worker with its open connections and the generations it still serves, with requests in flight (needs cluster:read).';

  async run(): Promise<unknown> {
    return this.call('GET', '/api/v1/sys/cluster/status');
  }
}
