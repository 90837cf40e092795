import { Flags } from '@oclif/core';
import { AdminCommand } from '../admin-command.js';
import { seg } from '../admin-client.js';
import { readState, stateFileFlag } from '../read-state.js';
import { PLAN_VIEW } from '../state-view.js';

export default class Diff extends AdminCommand {
  static override summary = 'Compare a state document with the drafts (or what serves): create, update, delete or unchanged per entity.';
  static override description =
    'The file is the whole state: an entity it lacks shows as a delete (--no-prune: left out). An update lists its changed fields as JSON pointers with old and new values. ' +
    'Exit code 0 when nothing differs, 1 when something does (as diff and terraform plan -detailed-exitcode), 2 when the file is refused.';
  static override examples = ['<%= config.bin %> diff -f state.yaml', '<%= config.bin %> diff -f state.yaml --against published --json action,name'];
  static override view = PLAN_VIEW;
  static override flags = {
    file: stateFileFlag,
    against: Flags.string({ options: ['drafts', 'published'], default: 'drafts', description: 'compare with the drafts or with what serves' }),
    prune: Flags.boolean({ default: true, allowNo: true, description: 'entities missing from the file show as deletes' }),
  };

  async run(): Promise<unknown> {
    const state = await this.input(() => readState(this.flags.file as string));
    const body = await this.call('POST', `/api/v1/${seg(await this.tenant())}/diff`, { state, against: this.flags.against, prune: this.flags.prune });
    process.exitCode = (body as { changed?: boolean }).changed ? 1 : 0;
    return body;
  }
}
