import { isPlainObject } from './cell.js';

/** What the caller sent that an error line can point at. */
export interface CallContext {
  tokenSent: boolean;
  tenantGiven: boolean;
}

/** One line for people about a failed call, with the flag or variable to change where one helps. */
export function errorLine(status: number, body: unknown, ctx: CallContext): string {
  const code = isPlainObject(body) && typeof body.code === 'string' ? body.code : `HTTP ${status}`;
  const message = isPlainObject(body) && typeof body.message === 'string' ? body.message : typeof body === 'string' ? body.slice(0, 200) : '';
  const hint = hintFor(code, ctx);
  return `Error: ${message} (${code})${hint ? `\n  ${hint}` : ''}`;
}

function hintFor(code: string, ctx: CallContext): string | null {
  switch (code) {
    case 'Svc.Auth.Unauthenticated':
      return ctx.tokenSent ? 'check the token given by --token or SWITCHYARD_TOKEN' : 'no token was sent: pass --token <token> or set SWITCHYARD_TOKEN';
    case 'Svc.Auth.TenantScope':
      return ctx.tenantGiven ? "a tenant's key acts on its own tenant only: drop --tenant (and SWITCHYARD_TENANT)" : null;
    case 'Cli.Unreachable':
      return 'is the gateway running, and is --admin (SWITCHYARD_ADMIN) its admin address?';
    default:
      return null;
  }
}
