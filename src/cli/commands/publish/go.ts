import { AdminCommand } from '../../admin-command.js';
import { seg } from '../../admin-client.js';

export default class PublishGo extends AdminCommand {
  static override summary = 'Publish the drafts as a new generation: ok, generation, planned, warnings.';
  static override examples = [
    '<%= config.bin %> publish go',
  ];

  async run(): Promise<unknown> {
    return this.call('POST', `/api/v1/${seg(await this.tenant())}/publish/go`);
  }
}
