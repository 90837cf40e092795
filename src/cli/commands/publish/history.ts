import { AdminCommand } from '../../admin-command.js';
import { seg } from '../../admin-client.js';

export default class PublishHistory extends AdminCommand {
  static override summary = "List the tenant's generations, newest first.";

  async run(): Promise<unknown> {
    return this.call('GET', `/api/v1/${seg(this.flags.tenant)}/publish/history`);
  }
}
