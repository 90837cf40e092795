import { Args } from '@oclif/core';
import { AdminCommand } from '../../admin-command.js';
import type { View } from '../../output/human.js';
import { seg } from '../../admin-client.js';

export default class ClusterHealth extends AdminCommand {
  static override summary = "A published cluster's targets with their health-check state (healthy, unhealthy or unchecked), counters and last check; with DNS targets, each address found and each name's last resolution.";
  static override examples = [
    '<%= config.bin %> cluster health api',
  ];
  static override view: View = { list: 'targets', columns: ['target', 'state', 'successes', 'failures', 'lastCheckedAt', 'ejectedUntil', 'inFlight', 'weight', 'priority'] };
  static override args = { name: Args.string({ required: true, description: 'the cluster name' }) };

  async run(): Promise<unknown> {
    return this.call('GET', `/api/v1/${seg(await this.tenant())}/clusters/${seg(this.args.name as string)}/health`);
  }
}
