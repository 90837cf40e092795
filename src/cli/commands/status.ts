import { Flags } from '@oclif/core';
import { AdminCommand } from '../admin-command.js';
import type { View } from '../output/human.js';

export default class Status extends AdminCommand {
  static override summary = 'Show the supervisor, the generation served, whether the node is ready (as /readyz) and every worker with its open connections and the generations it still serves, with requests in flight (needs cluster:read).';
  static override examples = [
    '<%= config.bin %> status',
    '<%= config.bin %> status --json generation',
    '<%= config.bin %> status --fleet',
  ];
  static override flags = {
    fleet: Flags.boolean({ description: 'list every node on the shared postgres:// volume with the generation it serves and its last heartbeat' }),
  };
  private static readonly fleetView: View = {
    list: 'fleet',
    hide: ['workers', 'supervisor'],
    columns: ['id', 'admin', 'generation', 'seenAt', 'startedAt', { path: 'self', title: 'THIS NODE', format: (v) => (v === true ? 'yes' : '') }],
  };
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

  protected override viewFor(view: View | undefined): View | undefined {
    return (this.flags as { fleet?: boolean }).fleet ? Status.fleetView : view;
  }

  async run(): Promise<unknown> {
    return this.call('GET', '/api/v1/sys/cluster/status');
  }
}
