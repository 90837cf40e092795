import { AdminCommand } from '../../admin-command.js';
import type { View } from '../../output/human.js';

export default class WorkersList extends AdminCommand {
  static override summary = "List the node's worker processes: slot, pid, state, generation, restarts, heap in use, open connections (needs cluster:read).";
  static override description =
    'During a replacement a slot shows two rows: its worker and the replacement starting, or the replaced worker draining until it exits. ' +
    'A worker whose event loop is blocked may show a standby beside it (state starting, standby: true in --json): it serves nothing unless the stall is confirmed.';
  static override examples = ['<%= config.bin %> workers list', '<%= config.bin %> workers list --json slot,pid,state'];
  static override view: View = {
    list: 'workers',
    hide: ['supervisor', 'generation', 'volume', 'readiness', 'node', 'fleet'],
    columns: ['slot', 'pid', 'state', 'generation', 'restarts', { path: 'heapMb', title: 'HEAP MB' }, 'connections', 'startedAt'],
  };

  async run(): Promise<unknown> {
    return this.call('GET', '/api/v1/sys/cluster/status');
  }
}
