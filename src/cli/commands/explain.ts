import { Args, Flags } from '@oclif/core';
import { AdminCommand } from '../admin-command.js';
import { seg } from '../admin-client.js';
import type { View } from '../output/human.js';
import { explainFooter } from '../explain-view.js';

export default class Explain extends AdminCommand {
  static override summary = 'Show which route a request would take and why, with its steps and terminal; nothing is sent.';
  static override description =
    'The path is normalised and the route chosen by the same code the data port runs, against the published generation (or the drafts, with --draft). ' +
    'Every other route of the tenant is listed in rank order with the reason it lost: path, host, method, or outranked. ' +
    "Then the winner's steps in run order with what each would do to this request (those the request alone decides are run on it: a missing key, a method, a client address, a declared size, a rewrite), " +
    'the target balancing would pick and the path the upstream would receive.';
  static override examples = [
    "<%= config.bin %> explain GET 'https://api.example.com/v1/users?id=1'",
    "<%= config.bin %> explain POST /api/orders -H 'host: shop.example' --draft",
    "<%= config.bin %> explain GET https://api.example.com/v1/users -H 'x-api-key: k1' --client 203.0.113.9",
  ];
  static override args = {
    method: Args.string({ required: true, description: 'the request method, e.g. GET' }),
    url: Args.string({ required: true, description: 'an absolute URL, or a path (the host then comes from -H host:)' }),
  };
  static override flags = {
    header: Flags.string({ char: 'H', multiple: true, description: "a request header, 'name: value' (repeatable)" }),
    client: Flags.string({ description: 'the client address, for ip-restriction and client-IP hashing' }),
    draft: Flags.boolean({ description: 'against the drafts compiled now, not the published generation' }),
  };
  static override view: View = { list: 'candidates', columns: ['route', 'order', 'pathPrefix', 'hosts', 'methods', 'outcome', 'reason'], hide: ['route', 'upstream'], footer: explainFooter };

  async run(): Promise<unknown> {
    const headers: Record<string, string> = {};
    for (const h of (this.flags.header as string[] | undefined) ?? []) {
      const colon = h.indexOf(':');
      if (colon <= 0) this.fail('Cli.Input', `-H ${JSON.stringify(h)}: a header is 'name: value'`);
      headers[h.slice(0, colon).trim().toLowerCase()] = h.slice(colon + 1).trim();
    }
    const body = { method: this.args.method, url: this.args.url, headers, ...(this.flags.client ? { clientAddress: this.flags.client } : {}), ...(this.flags.draft ? { draft: true } : {}) };
    return this.call('POST', `/api/v1/${seg(await this.tenant())}/explain`, body);
  }
}
