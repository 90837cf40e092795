import { AdminCommand } from '../../admin-command.js';
import { seg } from '../../admin-client.js';

export default class PublishDryRun extends AdminCommand {
  static override summary = 'Compile the drafts without side effects: success, candidateGeneration, issues, warnings, planned.';

  async run(): Promise<unknown> {
    return this.call('POST', `/api/v1/${seg(await this.tenant())}/publish/dry-run`);
  }
}
