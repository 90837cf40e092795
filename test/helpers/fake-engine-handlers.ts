import pino from 'pino';
import { createNodeEngine } from '../../src/worker/engine/node/node-engine.js';
import type { ClientWebSocket, DataEngine, Downstream, EngineHandlers, EngineLimits, ListenOptions, ResponseHead, ResponseSink, StallWatch, WebSocketPeer } from '../../src/worker/engine/contract.js';
import { staticReply } from '../../src/worker/response-head.js';
import { freePorts } from './ports.js';
import { LimitEvents } from '../../src/worker/limit-events.js';

/** What the fake request owner saw. */
export interface Seen {
  /** Writes of /stream that returned false, and drains that resumed them. */
  held: number;
  drained: number;
  aborted: number;
  wsOpened: number;
  /** Log lines at warn and above. */
  warnings: string[];
}

export const LIMITS: EngineLimits = {
  headerTimeoutMs: 10_000, idleTimeoutS: 10, bodyTimeoutMs: 10_000, sendTimeoutMs: 10_000, maxHeadBytes: 16_384, maxTargetBytes: 8_192,
  maxBodyBytes: 1 << 26, maxConnections: 1_000, chunkedRequestBodies: 'accept', h2MaxConcurrentStreams: 100, h2MaxHeaderListBytes: 16_384, h2MaxResetsPerSecond: 200, h2ResetCooldownS: 10,
};

const noop = (): void => {};
const noSink: ResponseSink = { responseCompleted: noop, stallWatch: (): StallWatch => ({ held: noop, clear: noop }) };
const head = (status: number, headers: [string, string][] = []): ResponseHead => ({ status, reason: '', headers });
export const STREAM_BYTES = 10 * 1024 * 1024;

const CODES = { 'Svc.Data.TooManyConnections': 503, 'Svc.Data.HeadTimeout': 408, 'Svc.Data.BadRequest': 400, 'Svc.Data.BadFraming': 400, 'Svc.Data.HeadTooLarge': 431 } as const;

/**
 * Answers by path: /hello 200 'hi' (with the protocol it came over), /echo the request body,
 * /stream 10 MB with backpressure, /slow 'late' after 600 ms, /hang never, /ws a WebSocket echo.
 */
export function fakeHandlers(seen: Seen): EngineHandlers {
  return {
    refusal: (code) => staticReply(CODES[code], JSON.stringify({ error: { code } }), { 'content-type': 'application/json' }),
    events: new LimitEvents(pino({ level: 'silent' })),
    webSocketOpened: () => void seen.wsOpened++,
    webSocketClosed: noop,
    request(h, down: Downstream, arrival) {
      down.onAborted(() => void seen.aborted++);
      const id = ['x-request-id', 'rid-1'] as const;
      const path = h.getUrl();
      if (path === '/hello') {
        return down.reply(head(200, [['content-type', 'text/plain'], ['x-proto', arrival.protocol], ['x-host', h.getHeader('host')], ['x-query', h.getQuery() ?? '-'], ['connection', 'keep-alive']]), id, 'hi', undefined, false, noSink);
      }
      if (path === '/echo') {
        const parts: Buffer[] = [];
        return down.onData((ab, last) => {
          parts.push(Buffer.from(ab.slice(0)));
          if (last) down.reply(head(200), id, Buffer.concat(parts), undefined, false, noSink);
        });
      }
      if (path === '/slow') return void setTimeout(() => down.reply(head(200), id, 'late', undefined, false, noSink), 600);
      if (path === '/hang') return;
      if (path === '/stream') {
        const chunk = Buffer.alloc(64 * 1024, 120);
        let sent = 0;
        const pump = (): void => {
          if (sent > 0) seen.drained++;
          while (sent < STREAM_BYTES) {
            const first = sent === 0;
            sent += chunk.length;
            if (!down.write(first ? head(200) : null, id, chunk, STREAM_BYTES, false, pump, noSink)) return void seen.held++;
          }
        };
        return pump();
      }
      if (path === '/ws' && arrival.upgrade) {
        let client: ClientWebSocket | null = null;
        const peer: WebSocketPeer = {
          attach: (c) => void (client = c),
          fromClient: (m, isBinary) => client!.send(Buffer.from(m as Buffer), isBinary),
          clientDrained: noop, clientPing: noop, clientPong: noop, clientClosed: noop,
          closeBoth: (code, reason) => client?.end(code, reason),
        };
        return void down.upgrade(peer, h.getHeader('sec-websocket-key'), 'echo', id);
      }
      down.replyStatic(staticReply(404, 'none', {}), id, false, h.getCaseSensitiveMethod() === 'HEAD');
    },
  };
}

export interface Running {
  engine: DataEngine;
  port: number;
  seen: Seen;
}

/** An engine with one listener on 127.0.0.1, port chosen by the kernel. */
export async function startEngine(options: Partial<ListenOptions>, limits: Partial<EngineLimits> = {}): Promise<Running> {
  const seen: Seen = { held: 0, drained: 0, aborted: 0, wsOpened: 0, warnings: [] };
  const log = pino({ level: 'warn' }, { write: (line: string) => void seen.warnings.push(line) });
  const engine = createNodeEngine(fakeHandlers(seen), { ...LIMITS, ...limits }, log);
  // The contract's listen() does not tell a kernel-chosen port: one is chosen first.
  const [port] = (await freePorts(1)) as [number];
  const ok = await engine.listen({ host: '127.0.0.1', port, ...options });
  if (!ok) throw new Error('engine did not listen');
  return { engine, port, seen };
}
