import { selectFields } from './fields.js';
import { renderHuman, type View } from './human.js';

/**
 * Where a command's answer goes, as gh and kubectl do it: on a terminal, text for people
 * (a table for lists, a summary for one entity); through a pipe or with `--json`, the JSON
 * body byte for byte as the admin port sent it, then a line end (`--json a,b`: only those
 * fields). A failure is always one human line on stderr, and its JSON envelope on stdout
 * when JSON is printed.
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

  /** `text`: the body as sent, printed as it is when the whole body is asked for. */
  answer(body: unknown, text: string): void {
    if (this.json === null) process.stdout.write(renderHuman(body, this.view) + '\n');
    else if (this.json.length === 0) process.stdout.write(text + '\n');
    else process.stdout.write(JSON.stringify(selectFields(body, this.json, this.view?.list)) + '\n');
  }

  /** `text`: the envelope as sent (or as the CLI made it); `line`: the same for people. */
  failure(text: string, line: string): void {
    process.stderr.write(line + '\n');
    if (this.json !== null) process.stdout.write(text + '\n');
  }
}
