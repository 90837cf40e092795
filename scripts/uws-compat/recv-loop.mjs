// uSockets, as built into uWebSockets.js 20.57, reads a socket again at once for as long as
// each recv fills its 512 KiB buffer, and never looks at pause() in that loop: an upload
// paused for a slow upstream keeps arriving (measured on loopback: 5 to 40 MiB in one burst).
// The loop's test is `length == 512 KiB`; making the constant one more, a length recv never
// returns, leaves one recv per readiness event, as uWS.js 20.30 did, so pause() holds and
// the rest waits in the kernel.

// After `call *0x48(%rax)` (the socket context's on_data): `cmp $0x80000,%r14d; jne`.
const X64_SITE = Buffer.from('ff5048' + '4181fe00000800' + '0f85', 'hex');
/** Offset of the immediate's low byte within the site. */
const IMMEDIATE_LOW = 6;

/**
 * Patches `binary` in place on x64; returns where, or null for an architecture without a
 * known site (the loop stays as built there). Refuses a binary where the site is not exactly
 * once, so a changed build is never patched by guess.
 */
export function patchRecvLoop(binary, arch) {
  if (arch !== 'x64') return null;
  const at = binary.indexOf(X64_SITE);
  if (at === -1 || binary.indexOf(X64_SITE, at + 1) !== -1) {
    throw new Error(`the recv loop's length test is not found exactly once (${at === -1 ? 'absent' : 'several'})`);
  }
  binary[at + IMMEDIATE_LOW] = 0x01; // 0x00080000 -> 0x00080001, little-endian
  return `recv loop at 0x${(at + IMMEDIATE_LOW).toString(16)}`;
}
