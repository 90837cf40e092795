import { Agent, request } from 'undici';
import * as v from 'valibot';
import type { StepRequest } from './step.js';

/** One keep-alive agent per worker for the steps that call other services. */
const agent = new Agent({ keepAliveTimeout: 4_000, connections: 64 });

export const HttpUrl = v.pipe(v.string(), v.url(), v.regex(/^https?:\/\//, 'must be an http(s) URL'));
export const HeaderName = v.pipe(v.string(), v.regex(/^[A-Za-z0-9-]+$/, 'must be a header name'));

export interface SubResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** Calls a service on behalf of a step, copying the named request headers. Rejects on network errors and timeouts. */
export async function subRequest(
  url: string,
  method: string,
  req: StepRequest,
  copy: readonly string[],
  timeoutMs: number,
): Promise<SubResponse> {
  const headers: Record<string, string> = {};
  for (const name of copy) {
    const val = req.header(name);
    if (val !== undefined) headers[name] = val;
  }
  headers['x-forwarded-method'] = req.method;
  headers['x-forwarded-uri'] = req.query === null ? req.url : `${req.url}?${req.query}`;
  const res = await request(url, { method: method as 'GET', headers, dispatcher: agent, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
  const body = await res.body.text();
  return { status: res.statusCode, headers: res.headers, body };
}
