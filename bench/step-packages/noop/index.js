// A step package whose step does nothing: what a package step costs a route by itself
// (bench/hot-path.mjs and run.mjs's `gatewayPackageSteps`, five of them on one route).
import { defineStep, v } from 'switchyard/step';

export default defineStep({
  code: 'bench-noop',
  summary: 'Does nothing (the bench of package steps)',
  settings: v.strictObject({}),
  answers: [],
  create: () => () => undefined,
});
