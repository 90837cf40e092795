import { request } from 'undici';

export interface AdminTarget {
  admin: string;
  token: string | undefined;
}

export interface AdminResponse {
  status: number;
  body: unknown;
  /** The body as the admin port sent it. */
  text: string;
}

/** One admin REST call; the body comes back parsed whatever the status. */
export async function callAdmin(
  target: AdminTarget,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
): Promise<AdminResponse> {
  const headers: Record<string, string> = {};
  if (target.token) headers.authorization = `Bearer ${target.token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await request(new URL(path, target.admin), {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.body.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    // not JSON: keep the text
  }
  return { status: res.statusCode, body: parsed, text };
}

/** Path segment, percent-encoded. */
export const seg = (s: string | number) => encodeURIComponent(String(s));
