import { isPlainObject, printable } from './cell.js';

/** What the caller sent that an error line can point at. */
export interface CallContext {
  tokenSent: boolean;
  tenantGiven: boolean;
}

/**
 * A failed call for people: one line, the flag or variable to change where one helps, and the
 * issues of a refused document or publish, one per line.
 */
export function errorLine(status: number, body: unknown, ctx: CallContext): string {
  const code = isPlainObject(body) && typeof body.code === 'string' ? body.code : `HTTP ${status}`;
  const message = isPlainObject(body) && typeof body.message === 'string' ? body.message : typeof body === 'string' ? body.slice(0, 200) : '';
  const hint = hintFor(code, ctx);
  const lines = [`Error: ${message} (${code})`, ...(hint ? [`  ${hint}`] : []), ...issueLines(body)];
  return lines.map(printable).join('\n');
}

/** A refused publish or document names its issues: one line each, `route/api /hosts: message`. */
function issueLines(body: unknown): string[] {
  const list = isPlainObject(body) ? (body.issues ?? body.errors) : undefined;
  if (!Array.isArray(list)) return [];
  return list.filter(isPlainObject).map((i) => {
    const where = [i.kind && i.name ? `${String(i.kind)}/${String(i.name)}` : null, i.pointer ?? i.path ?? null].filter(Boolean).join(' ');
    return `  ${where ? `${where}: ` : ''}${String(i.message ?? '')}${i.code ? ` (${String(i.code)})` : ''}`;
  });
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
