import type { CompileIssue } from './generation.js';

/** A dry-run's answer (and a refused publish's details): what the candidate would be. */
export interface DryRunResult {
  success: boolean;
  candidateGeneration: number;
  issues: CompileIssue[];
  /** Same shape as issues; they stop nothing. */
  warnings: CompileIssue[];
  planned: string[];
}

/** A publish's or rollback's answer once every worker acknowledged. */
export interface PublishResult {
  ok: true;
  generation: number;
  planned: string[];
  /** Present on a publish: dry-run's warnings for what was published. */
  warnings?: CompileIssue[];
}
