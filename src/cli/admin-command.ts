import { Command, Errors, Flags } from '@oclif/core';
import { callAdmin, type AdminResponse } from './admin-client.js';
import { CLI_ERRORS, type CliCode } from '../shared/errors.js';
import { Printer } from './output/printer.js';
import { errorLine } from './output/error-line.js';
import type { View } from './output/human.js';
import { jsonFlagValue } from './json-flag.js';
import type { Progress } from './output/progress.js';

interface AdminFlags {
  admin?: string;
  token?: string;
  tenant?: string;
  json?: string;
  [other: string]: unknown;
}

/** Thrown once a failure has been printed: the command stops, its exit code already set. */
class Printed extends Error {}

const GLOBAL = 'GLOBAL';

/**
 * Base of every admin command: --admin/--token/--tenant (with env fallbacks), REST calls,
 * the answer printed for people or as JSON (output/printer.ts). Exit codes: 0 on 2xx, 2 for
 * 4xx (the request was refused) and bad input, 3 for 5xx, 4 when the admin port could not
 * be reached.
 */
export abstract class AdminCommand extends Command {
  /** How the answer reads on a terminal: which list, which columns (output/human.ts). */
  static view: View | undefined;

  static override baseFlags = {
    admin: Flags.string({ env: 'SWITCHYARD_ADMIN', summary: 'Admin URL, e.g. http://127.0.0.1:9180.', helpGroup: GLOBAL }),
    token: Flags.string({ env: 'SWITCHYARD_TOKEN', summary: 'Bearer token of an admin key.', helpGroup: GLOBAL }),
    tenant: Flags.string({
      env: 'SWITCHYARD_TENANT',
      summary: "Tenant to act on. A tenant's own key needs none (it acts on its tenant); a system key acts on `default` without it.",
      helpGroup: GLOBAL,
    }),
    json: Flags.string({
      summary: 'Print the JSON body (the default through a pipe); with fields (`--json name,state`), only those.',
      helpValue: '[fields]',
      helpGroup: GLOBAL,
    }),
  };

  protected flags!: AdminFlags;
  protected args!: Record<string, string | number | undefined>;
  private printer!: Printer;

  override async init(): Promise<void> {
    await super.init();
    let parsed;
    try {
      // eslint-disable-next-line @typescript-eslint/no-explicit-any -- oclif types parse() by the concrete command class, which this base class cannot name
      parsed = await this.parse(this.constructor as any, jsonFlagValue(this.argv));
    } catch (err) {
      // Every unusable input exits 2 with a Cli.Input envelope on stdout (README), as other
      // bad input does: scripts branch on the code. oclif's text still goes to stderr. (A
      // value refused by an arg's or flag's parser, `rollback abc`, would otherwise exit 1.)
      const message = (err as Error).message;
      process.stdout.write(JSON.stringify({ code: 'Cli.Input', message }) + '\n');
      if (err instanceof Errors.CLIError && err.oclif?.exit === 2) throw err;
      throw new Errors.CLIError(message, { exit: 2 });
    }
    this.flags = parsed.flags as unknown as AdminFlags;
    this.args = parsed.args as Record<string, string | undefined>;
    this.printer = Printer.of(this.flags.json, process.stdout.isTTY === true, this.viewFor((this.constructor as typeof AdminCommand).view));
  }

  /** The view this run prints with: the command's own, unless its flags choose another. */
  protected viewFor(view: View | undefined): View | undefined {
    return view;
  }

  protected override async catch(err: Error & { exitCode?: number }): Promise<unknown> {
    if (err instanceof Printed) return undefined;
    return super.catch(err);
  }

  /** A CLI-side failure (bad input, no admin port): printed like an admin error, then the command stops. */
  protected fail(code: CliCode, message: string): never {
    this.printer.failure(JSON.stringify({ code, message }), errorLine(0, { code, message }, this.context()));
    process.exitCode = CLI_ERRORS[code].exit;
    throw new Printed();
  }

  /** Input the command reads (a document, a state file): a failure to read it is `Cli.Input`, exit 2. */
  protected async input<T>(read: () => Promise<T>): Promise<T> {
    try {
      return await read();
    } catch (err) {
      return this.fail('Cli.Input', (err as Error).message);
    }
  }

  /**
   * The tenant in the path of a tenant's operation: --tenant (or SWITCHYARD_TENANT), else the
   * key's own tenant (whoami), else `default` for a system key bound to none.
   */
  protected async tenant(): Promise<string> {
    if (this.flags.tenant !== undefined) return this.flags.tenant;
    const who = await this.request('GET', '/api/v1/sys/whoami');
    if (who.status >= 300) this.refused(who);
    const bound = (who.body as { tenant?: unknown } | null)?.tenant;
    return typeof bound === 'string' ? bound : 'default';
  }

  /** Whether the answer is printed for people (a terminal without --json). */
  protected get forPeople(): boolean {
    return this.printer.json === null;
  }

  /** One admin call whose answer is the command's output; `progress` is erased before it is printed. */
  protected async call(method: 'GET' | 'POST', path: string, body?: unknown, progress?: Progress | null): Promise<unknown> {
    let res: AdminResponse;
    try {
      res = await this.request(method, path, body);
    } finally {
      progress?.stop();
    }
    if (res.status >= 300) this.refused(res);
    this.printer.answer(res.body, res.text);
    process.exitCode = 0;
    return res.body;
  }

  /** A refused call: its line on stderr, its envelope on stdout for scripts, then the command stops. */
  protected refused(res: AdminResponse): never {
    this.printer.failure(res.text, errorLine(res.status, res.body, this.context()));
    process.exitCode = res.status < 500 ? 2 : 3;
    throw new Printed();
  }

  /** One admin call, its answer returned whatever the status (bad input and an unreachable port stop the command). */
  protected async request(method: 'GET' | 'POST', path: string, body?: unknown): Promise<AdminResponse> {
    const given = this.flags.admin;
    if (given === undefined) this.fail('Cli.Input', 'no admin URL: pass --admin <url> or set SWITCHYARD_ADMIN (e.g. http://127.0.0.1:9180)');
    // A value that is no http(s) URL is the caller's input, not an unreachable port (exit 4).
    const admin = URL.canParse(given) ? new URL(given) : null;
    if (admin === null || (admin.protocol !== 'http:' && admin.protocol !== 'https:')) {
      this.fail('Cli.Input', `--admin must be an http(s) URL such as http://127.0.0.1:9180, not ${JSON.stringify(given)}`);
    }
    // A token with a byte no header may hold (a CR from a token file written on Windows,
    // a space) is the caller's input too: undici refuses it before connecting.
    if (this.flags.token !== undefined && !/^[\x21-\x7e]+$/.test(this.flags.token)) {
      const what = this.flags.token === '' ? 'the token is empty' : 'the token holds a character a token cannot have (a space, a line end or a control character)';
      this.fail('Cli.Input', `${what}; check the token file or variable`);
    }
    try {
      return await callAdmin({ admin: given, token: this.flags.token }, method, path, body);
    } catch (err) {
      return this.fail('Cli.Unreachable', `cannot reach ${given}: ${(err as Error).message}`);
    }
  }

  private context() {
    return { tokenSent: this.flags?.token !== undefined, tenantGiven: this.flags?.tenant !== undefined };
  }
}
