import { Reply, type OpHandler } from '../op-context.js';
import type { Services } from '../services.js';
import { SvcError } from '../../shared/errors.js';

/** Starts a restart and answers 202 with its progress so far; the CLI follows it with restartStatus. */
export const restart: OpHandler<Services> = ({ services, audit }) => {
  const progress = services.workerRestart.start();
  audit.target = `restart ${progress.id}`;
  return new Reply(202, progress);
};

export const restartStatus: OpHandler<Services> = ({ services }) => {
  const latest = services.workerRestart.latest();
  if (latest === null) throw new SvcError('Svc.Workers.NoRestart');
  return latest;
};
