/** The answer's types live with the server's (src/contracts/explain.ts); the console imports types only. */
export type { Candidate, ExplainAnswer, Outcome, RouteView as RouteSummary, StepView, TerminalView as Terminal, UpstreamView, Verdict } from '../../../src/contracts/explain';

export interface ExplainRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  /** The client's IP, for the steps and hashing that read it. */
  clientAddress?: string;
  draft: boolean;
}

/**
 * The headers textarea, one `name: value` a line (blank lines skipped), as an object. A line
 * without a colon or a name throws, so a typo is not silently dropped from the simulation.
 */
export function parseHeaders(text: string): Record<string, string> {
  const headers: Record<string, string> = {};
  text.split(/\r?\n/).forEach((line, i) => {
    if (line.trim() === '') return;
    const colon = line.indexOf(':');
    const name = colon === -1 ? '' : line.slice(0, colon).trim();
    if (!name) throw new Error(`Headers, line ${i + 1}: expected "name: value", got ${JSON.stringify(line)}`);
    headers[name] = line.slice(colon + 1).trim();
  });
  return headers;
}
