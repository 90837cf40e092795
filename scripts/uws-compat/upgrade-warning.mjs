// uWS 20.57 cannot upgrade a WebSocket inside res.cork() after the request callback returned:
// the upgrade shrinks the socket in place, and cork's epilogue then reads the HTTP state from
// memory the shrink freed; when something reused it with the "close" bit set, the new
// WebSocket is shut at once (the client sees 101, then 1006). Upgrading outside cork is sound,
// but the binding then prints a "must be corked" warning each time. This patch removes that
// warning from res.upgrade alone (writes elsewhere still warn): the test of insideCorkCallback
// always takes the no-warning branch.

import { functionRange } from './elf.mjs';

const UPGRADES = [0, 1].map((ssl) => `_ZN19HttpResponseWrapper11res_upgradeILi${ssl}EEEvRKN2v820FunctionCallbackInfoINS1_5ValueEEE`);
/** `cmpl $0,(%rax)` on insideCorkCallback, then `je` to the warning: becomes a two-byte nop. */
const WARN_IF_ZERO = { site: Buffer.from('833800743c', 'hex'), patch: [0x66, 0x90] };
/** The same test on the other path, `jne` past the warning: becomes `jmp` past it. */
const SKIP_IF_SET = { site: Buffer.from('83380075c4', 'hex'), patch: [0xeb, 0xc4] };

function onlyOnce(binary, start, end, { site }) {
  const region = binary.subarray(start, end);
  const at = region.indexOf(site);
  if (at === -1 || region.indexOf(site, at + 1) !== -1) {
    throw new Error(`the upgrade's cork test is not found exactly once in res.upgrade (${at === -1 ? 'absent' : 'several'})`);
  }
  return start + at + 3; // the jump after the compare
}

/**
 * Patches `binary` in place on x64 (both res.upgrade instantiations, plain and TLS) and returns
 * where; null for an architecture without known sites. Every site is found before any is
 * written, so a changed build is refused whole.
 */
export function patchUpgradeWarning(binary, arch) {
  if (arch !== 'x64') return null;
  const sites = [];
  for (const name of UPGRADES) {
    const { start, end } = functionRange(binary, name);
    for (const kind of [WARN_IF_ZERO, SKIP_IF_SET]) sites.push({ at: onlyOnce(binary, start, end, kind), patch: kind.patch });
  }
  for (const { at, patch } of sites) binary.set(patch, at);
  return `upgrade warning at ${sites.map((s) => `0x${s.at.toString(16)}`).join(' ')}`;
}
