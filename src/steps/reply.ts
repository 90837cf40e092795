import type { StepReply } from './step.js';

/** A step's error answer: the same JSON envelope shape as every other gateway error. */
export function stepError(status: number, code: string, message: string, headers?: Record<string, string>): StepReply {
  return { status, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ code, message }) };
}
