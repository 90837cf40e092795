import type { ClientRequest } from 'node:http';

/** Writes `size` bytes of 'a' to `req` in 64 KiB pieces, waiting for 'drain' when told to, then ends it. */
export function writeBody(req: ClientRequest, size: number): void {
  const chunk = Buffer.alloc(64 * 1024, 0x61);
  let sent = 0;
  const pump = (): void => {
    while (sent < size) {
      sent += chunk.length;
      if (!req.write(chunk)) return void req.once('drain', pump);
    }
    req.end();
  };
  pump();
}
