import { AdminCommand } from '../../admin-command.js';
import { seg } from '../../admin-client.js';

export default class PublishDryRun extends AdminCommand {
  static override summary = 'Compile the drafts without side effects: success, candidateGeneration, issues, warnings, planned.';
  static override examples = [
    '<%= config.bin %> publish dry-run',
    '<%= config.bin %> publish dry-run --json success,issues',
  ];

  async run(): Promise<unknown> {
    return this.call('POST', `/api/v1/${seg(await this.tenant())}/publish/dry-run`);
  }
}
