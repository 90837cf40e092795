import { Args } from '@oclif/core';
import { AdminCommand } from '../../admin-command.js';
import { seg } from '../../admin-client.js';

export default class PublishRollback extends AdminCommand {
  static override summary = "Publish a new generation with the tenant's content of an earlier one.";
  static override examples = [
    '<%= config.bin %> publish rollback 3',
  ];
  static override args = { generation: Args.integer({ required: true, min: 1, description: 'a generation number of the tenant (publish history lists them)' }) };

  async run(): Promise<unknown> {
    return this.call('POST', `/api/v1/${seg(await this.tenant())}/publish/rollback/${seg(this.args.generation!)}`);
  }
}
