import { Flags } from '@oclif/core';
import { stringify } from 'yaml';
import { AdminCommand } from '../admin-command.js';
import { seg } from '../admin-client.js';

export default class Export extends AdminCommand {
  static override summary = "Print every entity of the tenant as one state document (YAML or JSON), for diff and sync.";
  static override description =
    'The document is {version: 1, tenant, clusters, routes, orchs, certs}, names and fields sorted, so the same state always prints the same bytes. ' +
    'Certificates are exported with privateKey "(write-only)": a sync keeps the stored key. By default the drafts as the next publish would serve them; --published for what serves now.';
  static override examples = ['<%= config.bin %> export > state.yaml', '<%= config.bin %> export --published -o json --tenant acme'];
  static override flags = {
    published: Flags.boolean({ description: 'what serves now, not the drafts', exclusive: ['drafts'] }),
    drafts: Flags.boolean({ description: 'the drafts over what serves (the default)', exclusive: ['published'] }),
    output: Flags.string({ char: 'o', options: ['yaml', 'json'], default: 'yaml', description: 'document format' }),
  };

  async run(): Promise<unknown> {
    const state = this.flags.published ? 'published' : 'drafts';
    const res = await this.request('GET', `/api/v1/${seg(await this.tenant())}/export?state=${state}`);
    if (res.status >= 300) this.refused(res);
    process.stdout.write(this.flags.output === 'json' ? JSON.stringify(res.body, null, 2) + '\n' : stringify(res.body, { lineWidth: 0 }));
    process.exitCode = 0;
    return res.body;
  }
}
