import { Flags } from '@oclif/core';
import { AdminCommand } from '../../admin-command.js';
import type { View } from '../../output/human.js';
import { seg } from '../../admin-client.js';

export default class AuditList extends AdminCommand {
  static override summary = "The tenant's audit trail of admin writes, newest first, a page at a time.";
  static override examples = [
    '<%= config.bin %> audit list --limit 20',
    '<%= config.bin %> audit list --before 120 --json id,operation,target',
  ];
  static override view: View = {
    hide: ['next'],
    columns: ['id', 'at', { path: 'identity.id', title: 'IDENTITY' }, 'operation', 'target', 'status', 'generation'],
    footer: (body) => (body.next === null || body.next === undefined ? null : `older entries: --before ${String(body.next)}`),
  };
  static override flags = {
    limit: Flags.integer({ description: 'entries per page (1-500, default 50)', min: 1, max: 500 }),
    before: Flags.integer({ description: "the previous page's `next`: entries older than this id", min: 1 }),
  };

  async run(): Promise<unknown> {
    const q = new URLSearchParams();
    if (this.flags.limit !== undefined) q.set('limit', String(this.flags.limit));
    if (this.flags.before !== undefined) q.set('before', String(this.flags.before));
    const qs = q.size ? `?${q}` : '';
    return this.call('GET', `/api/v1/${seg(await this.tenant())}/audit/list${qs}`);
  }
}
