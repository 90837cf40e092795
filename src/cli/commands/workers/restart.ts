import { Flags } from '@oclif/core';
import { AdminCommand } from '../../admin-command.js';
import type { View } from '../../output/human.js';
import type { WorkerRestartProgress } from '../../../contracts/node-status.js';

const PATH = '/api/v1/sys/workers/restart';
const POLL_MS = 250;

export default class WorkersRestart extends AdminCommand {
  static override summary = 'Replace every worker, one at a time, without dropping a connection (needs sys:write).';
  static override description =
    'Each replacement starts and listens before the worker it replaces stops accepting and drains (drain.graceMs). ' +
    'A line on stderr per worker replaced; the answer is the restart: state (done or failed), each worker replaced (old and new pid). ' +
    'Refused (409) while another restart runs. A replacement that cannot start stops the restart (exit 3); the workers not replaced keep serving.';
  static override examples = ['<%= config.bin %> workers restart', '<%= config.bin %> workers restart --json state', '<%= config.bin %> workers restart --no-wait'];
  static override flags = {
    wait: Flags.boolean({ default: true, allowNo: true, description: 'follow the restart until it ends (--no-wait: print it as started)' }),
  };
  static override view: View = { list: 'replaced', columns: ['slot', 'oldPid', 'newPid', 'at'] };

  async run(): Promise<unknown> {
    if (!(this.flags as { wait?: boolean }).wait) return this.call('POST', PATH);
    const started = await this.request('POST', PATH);
    if (started.status >= 300) this.refused(started);
    let p = started.body as WorkerRestartProgress;
    let told = 0;
    for (;;) {
      for (; told < p.replaced.length; told++) {
        const r = p.replaced[told]!;
        process.stderr.write(`worker ${told + 1}/${p.total} replaced (slot ${r.slot}: pid ${r.oldPid} -> pid ${r.newPid})\n`);
      }
      if (p.state !== 'running') break;
      await new Promise((r) => setTimeout(r, POLL_MS));
      const res = await this.request('GET', PATH);
      if (res.status >= 300) this.refused(res);
      p = res.body as WorkerRestartProgress;
      // Another restart began after this one ended: this one's answer is no longer readable.
      if (p.id !== (started.body as WorkerRestartProgress).id) break;
    }
    const body = await this.call('GET', PATH);
    if ((body as WorkerRestartProgress).state === 'failed') process.exitCode = 3;
    return body;
  }
}
