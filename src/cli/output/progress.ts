const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/**
 * One line on stderr that turns while work runs, for a person at a terminal only: nothing
 * at all when stdout or stderr is a pipe. stop() erases it before anything else is printed.
 */
export class Progress {
  private frame = 0;
  private detail = '';
  private readonly timer: NodeJS.Timeout;

  private constructor(private readonly label: string) {
    this.timer = setInterval(() => this.draw(), 100);
    this.draw();
  }

  static start(label: string): Progress | null {
    return process.stdout.isTTY === true && process.stderr.isTTY === true ? new Progress(label) : null;
  }

  set(detail: string): void {
    this.detail = detail;
    this.draw();
  }

  stop(): void {
    clearInterval(this.timer);
    process.stderr.write('\r\x1b[K');
  }

  private draw(): void {
    this.frame = (this.frame + 1) % FRAMES.length;
    process.stderr.write(`\r\x1b[K${FRAMES[this.frame]} ${this.label}${this.detail ? ` ${this.detail}` : ''}`);
  }
}
