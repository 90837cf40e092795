import type { IncomingHttpHeaders } from 'node:http';
import type { SvcError } from '../../shared/errors.js';

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** A browser navigating (the sign-in button, the provider's redirect back) asks for HTML; scripts get JSON. */
export function wantsHtml(headers: IncomingHttpHeaders): boolean {
  return (headers.accept ?? '').includes('text/html');
}

/** No script, no style from elsewhere: the page only says what failed and links back to the console. */
export const PAGE_HEADERS = { 'content-security-policy': "default-src 'none'; frame-ancestors 'none'", 'referrer-policy': 'no-referrer' };

/** The page a failed sign-in shows in the browser: the error's code and message, and the way back. */
export function signInFailedPage(e: SvcError, traceId: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sign-in refused · Switchyard</title></head>
<body>
<main>
<h1>Sign-in ${e.status === 503 ? 'unavailable' : 'refused'}</h1>
<p id="error-code">${escape(e.code)}</p>
<p id="error-message">${escape(e.message)}</p>
<p>Trace id ${escape(traceId)}</p>
<p><a href="/console/">Back to the console</a></p>
</main>
</body></html>
`;
}
