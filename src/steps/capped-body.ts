import type { Dispatcher } from 'undici';

/** A called service's answer body, read whole (steps hold it per request): past `max` bytes the body is dropped and the call fails. */
export async function readCapped(body: Dispatcher.ResponseData['body'], max: number, what: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > max) {
      body.destroy();
      throw new Error(`${what} is larger than ${max} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
