#!/usr/bin/env node
// Writes docs/steps.md from the step registry (run after `npm run build`).
import { writeFileSync } from 'node:fs';
import { renderStepsDoc } from '../dist/steps/steps-doc.js';

writeFileSync(new URL('../docs/steps.md', import.meta.url), renderStepsDoc());
console.log('wrote docs/steps.md');
