import { parseQuery, type QueryPair } from './url-query.js';
import { parseCookies } from './cookie-header.js';

/**
 * A request's query pairs and cookies, each read by the one parser of its format when first
 * asked and kept: most routes never ask, and none pays twice. The worker's request, a fixed
 * answer's log record and explain's dry request read them through it.
 */
export class ParsedOnDemand {
  private pairs: readonly QueryPair[] | null = null;
  private cookies: ReturnType<typeof parseCookies> | null = null;

  /** `headers`: lower-case names and values, alternating; every `cookie` line is one list. */
  constructor(
    private readonly query: string | null,
    private readonly headers: readonly string[],
  ) {}

  get queryPairs(): readonly QueryPair[] {
    return (this.pairs ??= parseQuery(this.query));
  }

  cookie(name: string): string | undefined {
    if (this.cookies === null) {
      const lines: string[] = [];
      const h = this.headers;
      for (let i = 0; i < h.length; i += 2) if (h[i] === 'cookie') lines.push(h[i + 1]!);
      this.cookies = parseCookies(lines);
    }
    return this.cookies[name];
  }
}
