import { Flags } from '@oclif/core';
import { AdminCommand } from '../../admin-command.js';
import type { View } from '../../output/human.js';
import { seg } from '../../admin-client.js';

export default class PublishHistory extends AdminCommand {
  static override summary = "List the tenant's generations, newest first.";
  static override examples = [
    '<%= config.bin %> publish history --limit 10',
  ];
  static override view: View = { columns: ['generation', 'action', 'createdAt', 'planned'] };
  static override flags = {
    limit: Flags.integer({ description: 'how many generations (1-1000, default 100)', min: 1, max: 1000 }),
  };

  async run(): Promise<unknown> {
    const qs = this.flags.limit === undefined ? '' : `?limit=${this.flags.limit}`;
    return this.call('GET', `/api/v1/${seg(await this.tenant())}/publish/history${qs}`);
  }
}
