import { AdminCommand } from '../admin-command.js';
import type { View } from '../output/human.js';

export default class Status extends AdminCommand {
  static override summary = 'Show the supervisor, the generation served and every worker with its open connections and the generations it still serves, with requests in flight (needs cluster:read).';
  static override examples = [
    '<%= config.bin %> status',
    '<%= config.bin %> status --json generation',
  ];
  static override view: View = {
    list: 'workers',
    columns: [
      'slot',
      'pid',
      'state',
      'generation',
      'connections',
      { path: 'generations', title: 'IN FLIGHT BY GENERATION', format: (v) => (Array.isArray(v) ? v.map((g: { generation: number; inFlight: number }) => `${g.generation}:${g.inFlight}`).join(' ') : '-') },
      'restarts',
      'startedAt',
    ],
  };

  async run(): Promise<unknown> {
    return this.call('GET', '/api/v1/sys/cluster/status');
  }
}
