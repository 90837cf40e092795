import { Command, Errors, Flags } from '@oclif/core';
import { callAdmin, type AdminResponse } from './admin-client.js';
import type { CliCode } from '../shared/errors.js';

interface AdminFlags {
  admin: string;
  token?: string;
  tenant: string;
  [other: string]: unknown;
}

/**
 * Base of every admin command: --admin/--token/--tenant (with env fallbacks), one REST
 * call, the JSON body on stdout. Exit codes: 0 on 2xx, 2 for 4xx (the request was
 * refused), 3 for 5xx, 4 when the admin port could not be reached.
 */
export abstract class AdminCommand extends Command {
  static override baseFlags = {
    admin: Flags.string({ env: 'SWITCHYARD_ADMIN', description: 'admin URL, e.g. http://127.0.0.1:9180', required: true }),
    token: Flags.string({ env: 'SWITCHYARD_TOKEN', description: 'bearer token' }),
    tenant: Flags.string({ default: 'default', description: 'tenant name' }),
  };

  protected flags!: AdminFlags;
  protected args!: Record<string, string | number | undefined>;

  override async init(): Promise<void> {
    await super.init();
    let parsed;
    try {
      // eslint-disable-next-line @typescript-eslint/no-explicit-any -- oclif types parse() by the concrete command class, which this base class cannot name
      parsed = await this.parse(this.constructor as any);
    } catch (err) {
      // Every unusable input exits 2 with a Cli.Input envelope on stdout (README), as other
      // bad input does: scripts branch on the code. oclif's text still goes to stderr. (A
      // value refused by an arg's or flag's parser, `rollback abc`, would otherwise exit 1.)
      const message = (err as Error).message;
      process.stdout.write(JSON.stringify({ code: 'Cli.Input', message }, null, 2) + '\n');
      if (err instanceof Errors.CLIError && err.oclif?.exit === 2) throw err;
      throw new Errors.CLIError(message, { exit: 2 });
    }
    this.flags = parsed.flags as unknown as AdminFlags;
    this.args = parsed.args as Record<string, string | undefined>;
  }

  /** A CLI-side failure (bad input), printed like an admin error; exit 2. */
  protected fail(code: CliCode, message: string): unknown {
    const out = { code, message };
    process.stdout.write(JSON.stringify(out, null, 2) + '\n');
    process.exitCode = 2;
    return out;
  }

  protected async call(method: 'GET' | 'POST', path: string, body?: unknown): Promise<unknown> {
    // A value that is no http(s) URL is the caller's input, not an unreachable port (exit 4).
    const admin = URL.canParse(this.flags.admin) ? new URL(this.flags.admin) : null;
    if (admin === null || (admin.protocol !== 'http:' && admin.protocol !== 'https:')) {
      return this.fail('Cli.Input', `--admin must be an http(s) URL such as http://127.0.0.1:9180, not ${JSON.stringify(this.flags.admin)}`);
    }
    // A token with a byte no header may hold (a CR from a token file written on Windows,
    // a space) is the caller's input too: undici refuses it before connecting.
    if (this.flags.token !== undefined && !/^[\x21-\x7e]+$/.test(this.flags.token)) {
      const what = this.flags.token === '' ? 'the token is empty' : 'the token holds a character a token cannot have (a space, a line end or a control character)';
      return this.fail('Cli.Input', `${what}; check the token file or variable`);
    }
    let res: AdminResponse;
    try {
      res = await callAdmin({ admin: this.flags.admin, token: this.flags.token }, method, path, body);
    } catch (err) {
      const out = { code: 'Cli.Unreachable', message: `cannot reach ${this.flags.admin}: ${(err as Error).message}` };
      process.stdout.write(JSON.stringify(out, null, 2) + '\n');
      process.exitCode = 4;
      return out;
    }
    process.stdout.write(JSON.stringify(res.body, null, 2) + '\n');
    process.exitCode = res.status < 300 ? 0 : res.status < 500 ? 2 : 3;
    return res.body;
  }
}
