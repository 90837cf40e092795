import { AdminCommand } from '../admin-command.js';
import type { View } from '../output/human.js';

export default class Whoami extends AdminCommand {
  static override summary = 'Show the calling identity: kind, tenant, masks and scopes.';
  static override examples = [
    '<%= config.bin %> whoami',
    'SWITCHYARD_TOKEN=syk_… <%= config.bin %> whoami --json kind,tenant',
  ];

  // The masks are the scopes as bit sets: the scopes say the same to a person.
  static override view: View = { hide: ['masks'] };

  async run(): Promise<unknown> {
    return this.call('GET', '/api/v1/sys/whoami');
  }
}
