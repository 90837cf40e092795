// What a child process printed and how it ended, read once both its output streams
// closed: 'exit' can come before the last of its output was read (a bench round lost
// wrk's whole report that way), 'close' comes after.

/**
 * Resolves with { code, signal, out, err } when `child` closed (`err` keeps its last
 * `errTail` characters); rejects when it could not be started.
 */
export function childOutput(child, errTail = 4000) {
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stdout?.setEncoding('utf8').on('data', (d) => (out += d));
    child.stderr?.setEncoding('utf8').on('data', (d) => (err = (err + d).slice(-errTail)));
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal, out, err }));
  });
}
