import { KINDS } from '../../../contracts/entities.js';
import { Args, Flags } from '@oclif/core';
import { AdminCommand } from '../../admin-command.js';
import { seg } from '../../admin-client.js';
import { readDocument } from '../../read-document.js';

export default class ConfigSet extends AdminCommand {
  static override summary = 'Write a draft entity (cluster, route or orch) from a file or stdin.';
  static override args = {
    kind: Args.string({ required: true, options: [...KINDS] }),
    name: Args.string({ required: true }),
  };
  static override flags = { file: Flags.string({ char: 'f', description: 'JSON document (default: stdin)' }) };

  async run(): Promise<unknown> {
    let doc: unknown;
    try {
      doc = await readDocument(this.flags.file as string | undefined);
    } catch (err) {
      return this.fail('Cli.Input', (err as Error).message);
    }
    return this.call('POST', `/api/v1/${seg(await this.tenant())}/config/set/${seg(this.args.kind!)}/${seg(this.args.name!)}`, doc);
  }
}
