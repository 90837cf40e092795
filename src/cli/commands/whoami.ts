import { AdminCommand } from '../admin-command.js';

export default class Whoami extends AdminCommand {
  static override summary = 'Show the calling identity: kind, tenant, masks and scopes.';

  async run(): Promise<unknown> {
    return this.call('GET', '/api/v1/sys/whoami');
  }
}
