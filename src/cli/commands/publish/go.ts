import { AdminCommand } from '../../admin-command.js';
import { seg } from '../../admin-client.js';
import { Progress } from '../../output/progress.js';

interface WorkerRow {
  pid: number | null;
  generation: number;
}

export default class PublishGo extends AdminCommand {
  static override summary = 'Publish the drafts as a new generation: ok, generation, planned, warnings.';
  static override description =
    'On a terminal a line shows how many workers have loaded the new generation while the publish runs (with a key that may read the cluster status).';
  static override examples = ['<%= config.bin %> publish go'];

  async run(): Promise<unknown> {
    const path = `/api/v1/${seg(await this.tenant())}/publish/go`;
    const progress = this.forPeople ? Progress.start('publishing') : null;
    const watching = progress ? this.watchWorkers(progress) : null;
    try {
      return await this.call('POST', path, undefined, progress);
    } finally {
      watching?.stop();
    }
  }

  /** Polls the cluster status: workers whose generation moved since the publish began. */
  private watchWorkers(progress: Progress): { stop(): void } {
    let stopped = false;
    let timer: NodeJS.Timeout | undefined;
    const workers = async (): Promise<WorkerRow[] | null> => {
      const res = await this.request('GET', '/api/v1/sys/cluster/status');
      return res.status === 200 ? (res.body as { workers: WorkerRow[] }).workers : null;
    };
    void (async () => {
      const before = await workers();
      if (before === null) return; // the key may not read the status: the line just turns
      const start = new Map(before.map((w) => [w.pid, w.generation]));
      const tick = async () => {
        const now = await workers();
        if (stopped || now === null) return;
        const moved = now.filter((w) => (start.get(w.pid) ?? -1) < w.generation).length;
        progress.set(`${moved}/${now.length} workers on the new generation`);
        timer = setTimeout(() => void tick(), 150);
      };
      if (!stopped) await tick();
    })().catch(() => undefined);
    return {
      stop: () => {
        stopped = true;
        clearTimeout(timer);
      },
    };
  }
}
