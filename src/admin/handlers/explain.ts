import type { OpHandler } from '../op-context.js';
import type { Services } from '../services.js';
import { isIP } from 'node:net';
import { SvcError } from '../../shared/errors.js';
import { explainRoute } from '../explain/route-explain.js';

const isText = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && v.length <= 8192;

/**
 * A read (a simulation: nothing is sent anywhere): how the data port would route
 * `{method, url, headers?, clientAddress?}` with the published generation, or with the drafts compiled now
 * (`draft: true`).
 */
export const explain: OpHandler<Services> = async ({ params, body, services }) => {
  const b = (typeof body === 'object' && body !== null && !Array.isArray(body) ? body : {}) as Record<string, unknown>;
  const errors: { path: string; message: string }[] = [];
  if (!isText(b.method) || !/^[A-Za-z]+$/.test(b.method)) errors.push({ path: '/method', message: 'an HTTP method, e.g. GET' });
  if (!isText(b.url)) errors.push({ path: '/url', message: 'an absolute URL or a path, e.g. https://api.example.com/v1/users?id=1' });
  const headers: Record<string, string> = {};
  if (b.headers !== undefined) {
    if (typeof b.headers !== 'object' || b.headers === null || Array.isArray(b.headers)) errors.push({ path: '/headers', message: 'an object of header name to value' });
    else for (const [k, v] of Object.entries(b.headers)) if (typeof v === 'string') headers[k.toLowerCase()] = v;
  }
  if (b.clientAddress !== undefined && (typeof b.clientAddress !== 'string' || isIP(b.clientAddress) === 0)) errors.push({ path: '/clientAddress', message: 'an IPv4 or IPv6 address' });
  if (b.draft !== undefined && typeof b.draft !== 'boolean') errors.push({ path: '/draft', message: 'true or false' });
  if (errors.length > 0) throw new SvcError('Svc.Config.Invalid', `Invalid explain request at ${errors[0]!.path}: ${errors[0]!.message}`, { errors });
  const tenant = params.tenant!;
  const req = { method: b.method as string, url: b.url as string, headers, clientAddress: (b.clientAddress as string | undefined) ?? null };
  if (b.draft === true) {
    services.quotas.takeDryRun(tenant);
    const c = await services.publisher.candidate(tenant);
    if (c.generation === null) throw new SvcError('Svc.Publish.Rejected', `The drafts do not compile (${c.issues.length} issue(s)): nothing to explain against`, { issues: c.issues });
    return { tenant, against: 'drafts', ...(await explainRoute(c.generation, tenant, req, services.paths, services.steps)) };
  }
  const served = services.publisher.current();
  if (!served) return { tenant, against: 'published', route: null, refused: 'nothing is published yet: 503 Svc.Data.NotPublished', candidates: [] };
  return { tenant, against: 'published', generation: served.id, ...(await explainRoute(served.payload, tenant, req, services.paths, services.steps)) };
};
