// JSON pointers (RFC 6901) for issues: the compiler's documents and step settings, and the
// step SDK's tester, which must point where a publish would.

/** One key as a JSON pointer token (RFC 6901: `~` and `/` escaped). */
export const pointerToken = (key: string): string => key.replace(/~/g, '~0').replace(/\//g, '~1');

/** A valibot issue path as a JSON pointer ('' for the document itself). */
export function pointer(path: readonly { key: unknown }[] | undefined): string {
  return (path ?? []).map((p) => '/' + pointerToken(String(p.key))).join('');
}
