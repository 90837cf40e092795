import { Flags } from '@oclif/core';
import { AdminCommand } from '../../admin-command.js';
import { kindArg, nameArg } from '../../entity-args.js';
import { seg } from '../../admin-client.js';
import { readDocument } from '../../read-document.js';

export default class ConfigSet extends AdminCommand {
  static override summary = 'Write a draft entity (a cluster, route, orch chain or cert) from a file or stdin.';
  static override examples = [
    '<%= config.bin %> config set cluster api -f cluster.json',
    'echo \'{"targets":["127.0.0.1:3000"]}\' | <%= config.bin %> config set cluster api',
  ];
  static override args = {
    kind: kindArg,
    name: nameArg,
  };
  static override flags = { file: Flags.string({ char: 'f', description: 'JSON document (default: stdin)' }) };

  async run(): Promise<unknown> {
    let doc: unknown;
    try {
      doc = await readDocument(this.flags.file as string | undefined, `echo '{…}' | ${this.config.bin} config set ${String(this.args.kind)} ${String(this.args.name)}`);
    } catch (err) {
      return this.fail('Cli.Input', (err as Error).message);
    }
    return this.call('POST', `/api/v1/${seg(await this.tenant())}/config/set/${seg(this.args.kind!)}/${seg(this.args.name!)}`, doc);
  }
}
