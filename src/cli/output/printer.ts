import { selectFields } from './fields.js';
import { renderHuman, type View } from './human.js';

/**
 * Where a command's answer goes, as gh and kubectl do it: on a terminal, text for people
 * (a table for lists, a summary for one entity); through a pipe or with `--json`, the JSON
 * body exactly as the admin port sent it (`--json a,b`: only those fields). A failure is
 * always one human line on stderr, and its JSON envelope on stdout when JSON is printed.
 */
export class Printer {
  constructor(
    /** null: text for people; [] the whole JSON body; else the fields to keep. */
    readonly json: readonly string[] | null,
    private readonly view: View | undefined,
  ) {}

  /** `--json` as given (undefined: absent; '*' or '': whole) and whether stdout is a terminal. */
  static of(jsonFlag: string | undefined, stdoutIsTty: boolean, view?: View): Printer {
    if (jsonFlag === undefined) return new Printer(stdoutIsTty ? null : [], view);
    const fields = jsonFlag === '*' ? [] : jsonFlag.split(',').map((f) => f.trim()).filter(Boolean);
    return new Printer(fields, view);
  }

  answer(body: unknown): void {
    if (this.json === null) {
      process.stdout.write(renderHuman(body, this.view) + '\n');
      return;
    }
    const out = this.json.length === 0 ? body : selectFields(body, this.json, this.view?.list);
    process.stdout.write(JSON.stringify(out, null, 2) + '\n');
  }

  failure(envelope: unknown, line: string): void {
    process.stderr.write(line + '\n');
    if (this.json !== null) process.stdout.write(JSON.stringify(envelope, null, 2) + '\n');
  }
}
