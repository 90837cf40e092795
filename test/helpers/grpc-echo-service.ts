import { createHash } from 'node:crypto';
import type { EventEmitter } from 'node:events';
import { Metadata } from '@grpc/grpc-js';
import type * as grpc from '@grpc/grpc-js';
import { streamPayload, type EchoReply, type EchoRequest, type StreamRequest, type StreamSummary } from './grpc-echo-proto.js';

/**
 * Call metadata that makes Unary send its head before answering, so a `fail:<N>` status
 * travels in trailers; without it grpc-js answers a failure trailers-only (status in the head).
 */
export const HEADERS_FIRST = 'x-echo-headers-first';

/** What the echo server counts; grpc.ts's EchoServer documents each field. */
export interface EchoStats { calls: number; cancelled: number; completed: number; lastMetadata: Record<string, string> | null }

/** What every kind of server call has: its metadata, and the 'cancelled' event. */
type Call = Pick<grpc.ServerUnaryCall<unknown, unknown>, 'metadata'> & EventEmitter;

/** A call's metadata as strings (binary values base64). */
export function metadataJson(md: grpc.Metadata): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(md.getMap())) out[k] = typeof v === 'string' ? v : Buffer.from(v).toString('base64');
  return out;
}

/**
 * The methods of `switchyard.test.Echo` (behaviour described on EchoServer in grpc.ts),
 * counting into `stats` and emitting each cancelled call's method name on `onCancelled`.
 */
export function echoService(stats: EchoStats, onCancelled: EventEmitter): grpc.UntypedServiceImplementation {
  /**
   * Counts the call and watches for its cancellation; `stop` undoes what the call still
   * has pending. The returned `finish` marks it completed: grpc-js emits 'cancelled' on
   * every call once its stream closes, also after the status went out.
   */
  const begin = (call: Call, method: string, stop: () => void = () => {}) => {
    stats.calls++;
    stats.lastMetadata = metadataJson(call.metadata);
    let finished = false;
    call.on('cancelled', () => {
      if (finished) return;
      finished = true;
      stop();
      stats.cancelled++;
      onCancelled.emit('cancelled', method);
    });
    return () => {
      if (finished) return false;
      finished = true;
      stats.completed++;
      return true;
    };
  };

  return {
    Unary(call: grpc.ServerUnaryCall<EchoRequest, EchoReply>, done: grpc.sendUnaryData<EchoReply>) {
      let timer: NodeJS.Timeout | undefined;
      const finish = begin(call, 'Unary', () => clearTimeout(timer));
      const { message = '', payload = Buffer.alloc(0), delayMs = 0 } = call.request;
      // Asked for, the head goes first: a failure's status then comes in trailers, not trailers-only.
      if (call.metadata.get(HEADERS_FIRST).length > 0) call.sendMetadata(new Metadata());
      const answer = () => {
        if (call.cancelled || !finish()) return;
        const fail = /^fail:(\d+)$/.exec(message);
        if (fail) return done({ code: Number(fail[1]), details: 'failed on purpose' });
        done(null, { message, payload: Buffer.from(payload), index: 0, metadata: JSON.stringify(metadataJson(call.metadata)) });
      };
      if (delayMs > 0) timer = setTimeout(answer, delayMs);
      else answer();
    },

    ServerStream(call: grpc.ServerWritableStream<StreamRequest, EchoReply>) {
      let stopped = false;
      let wake: (() => void) | undefined;
      const finish = begin(call, 'ServerStream', () => {
        stopped = true;
        wake?.();
      });
      const { count = 0, size = 0, intervalMs = 0 } = call.request;
      void (async () => {
        for (let i = 0; i < count && !stopped; i++) {
          if (intervalMs > 0) await new Promise((r) => setTimeout(r, intervalMs));
          if (stopped) return;
          if (!call.write({ message: `reply ${i}`, payload: streamPayload(i, size), index: i, metadata: '' })) {
            await new Promise<void>((r) => {
              wake = r;
              call.once('drain', r);
            });
          }
        }
        if (stopped || !finish()) return;
        call.end();
      })();
    },

    ClientStream(call: grpc.ServerReadableStream<EchoRequest, StreamSummary>, done: grpc.sendUnaryData<StreamSummary>) {
      const finish = begin(call, 'ClientStream');
      const hash = createHash('sha256');
      let count = 0;
      let bytes = 0;
      call.on('data', (req: EchoRequest) => {
        count++;
        const p = Buffer.from(req.payload ?? []);
        bytes += p.length;
        hash.update(p);
      });
      call.on('end', () => {
        if (call.cancelled || !finish()) return;
        done(null, { count, bytes, sha256: hash.digest('hex') });
      });
      call.on('error', () => {});
    },

    Bidi(call: grpc.ServerDuplexStream<EchoRequest, EchoReply>) {
      const finish = begin(call, 'Bidi');
      let index = 0;
      call.on('data', (req: EchoRequest) => {
        call.write({ message: req.message ?? '', payload: Buffer.from(req.payload ?? []), index: index++, metadata: '' });
      });
      call.on('end', () => {
        if (call.cancelled || !finish()) return;
        call.end();
      });
      call.on('error', () => {});
    },
  };
}
