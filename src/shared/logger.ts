import pino, { type Logger, type LevelWithSilent } from 'pino';

export type { Logger };

/** JSON logs to stderr; stdout carries only the ready line and command results. */
export function createLogger(level: LevelWithSilent = 'info', bindings: Record<string, unknown> = {}): Logger {
  return pino({ level, base: { pid: process.pid, ...bindings } }, pino.destination({ fd: 2, sync: true }));
}
