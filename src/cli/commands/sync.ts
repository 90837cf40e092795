import { Flags } from '@oclif/core';
import { AdminCommand } from '../admin-command.js';
import { seg } from '../admin-client.js';
import { readState, stateFileFlag } from '../read-state.js';
import { PLAN_VIEW } from '../state-view.js';

export default class Sync extends AdminCommand {
  static override summary = 'Make the drafts what a state document says, in one transaction; --publish publishes them in the same call.';
  static override description =
    'Creates and updates what the file holds; deletes what it lacks only with --prune. All or nothing: a refused document, a quota or (with --publish) ' +
    'a refused compile leaves every draft as it was. A second sync of the same file changes nothing and publishes no generation. ' +
    '--dry-run answers the plan (and with --publish, whether the compile would pass) and changes nothing. --publish needs publish:write too.';
  static override examples = ['<%= config.bin %> sync -f state.yaml --dry-run', '<%= config.bin %> sync -f state.yaml --prune --publish'];
  static override view = PLAN_VIEW;
  static override flags = {
    file: stateFileFlag,
    prune: Flags.boolean({ description: 'stage the removal of entities the file lacks' }),
    publish: Flags.boolean({ description: 'compile and publish in the same call' }),
    'dry-run': Flags.boolean({ description: 'show the plan, change nothing' }),
  };

  async run(): Promise<unknown> {
    const state = await this.input(() => readState(this.flags.file as string));
    return this.call('POST', `/api/v1/${seg(await this.tenant())}/sync`, {
      state,
      prune: this.flags.prune === true,
      publish: this.flags.publish === true,
      dryRun: this.flags['dry-run'] === true,
    });
  }
}
