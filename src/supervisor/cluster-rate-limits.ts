import { Redis } from 'ioredis';
import type { Logger } from '../shared/logger.js';

export interface ClusterLease {
  granted: number;
  retryAfterMs: number;
  remaining: number;
  unavailable?: true;
  /** Tokens handed out without Redis (onStoreDown allow): the worker never gives them back to the bucket. */
  unbacked?: true;
}

/**
 * A token bucket in Redis, taken from atomically by every node: refill by the server's clock
 * (one clock for the fleet), unspent tokens given back, and a batch of a share of what is
 * left (one token near empty, so the count is exact). Returns {granted, retryAfterMs, remaining}.
 * A key lives until its bucket would be full again (then it is the same as no key), at most an
 * hour: per-client keys (ip, a header) cannot pile up in Redis whatever clients send.
 */
const TAKE = `
local MAX_TTL_MS = 3600000
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local returned = tonumber(ARGV[3])
local divisor = tonumber(ARGV[4])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local v = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
local tokens = tonumber(v[1])
local ts = tonumber(v[2])
if tokens == nil then tokens = burst; ts = now end
tokens = math.min(burst, tokens + math.max(0, now - ts) * rate / 1000 + returned)
local granted = math.min(math.floor(tokens), math.max(1, math.floor(tokens / divisor)))
tokens = tokens - granted
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'ts', now)
local ttl = math.min(MAX_TTL_MS, math.ceil((burst - tokens) * 1000 / rate) + 1000)
redis.call('PEXPIRE', KEYS[1], ttl)
local retry = 0
if granted == 0 then retry = math.ceil((1 - tokens) * 1000 / rate) end
return {granted, retry, math.floor(tokens)}
`;

/**
 * A lease answered without Redis, by the step's onStoreDown: `allow` hands out a small batch
 * (so workers do not ask per request) that never goes back to the bucket; `deny` refuses for a second.
 */
export function storeDownLease(onStoreDown: 'allow' | 'deny'): ClusterLease {
  return onStoreDown === 'allow' ? { granted: 10, retryAfterMs: 0, remaining: 0, unbacked: true } : { granted: 0, retryAfterMs: 1_000, remaining: 0, unavailable: true };
}

/**
 * Fleet-wide rate-limit buckets (scope cluster): the supervisor takes tokens from Redis in
 * batches and leases them to its workers as for node-wide ones. Redis that cannot answer
 * within `timeoutMs` is "down": each lease then follows the step's onStoreDown, is counted
 * (`downAnswers`), and the outage is logged once.
 */
export class ClusterRateLimits {
  readonly downAnswers = { allow: 0, deny: 0 };
  private readonly redis: Redis;
  private down = false;

  constructor(
    url: string,
    password: string | undefined,
    private readonly prefix: string,
    private readonly workers: () => number,
    private readonly log: Logger,
    private readonly timeoutMs = 250,
  ) {
    this.redis = new Redis(url, {
      ...(password ? { password } : {}),
      lazyConnect: false,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: timeoutMs,
      connectTimeout: 1_000,
      retryStrategy: () => 500,
    });
    this.redis.on('error', () => {}); // the lease answers say it; an error event would crash the process
    this.redis.defineCommand('switchyardTake', { numberOfKeys: 1, lua: TAKE });
  }

  async lease(bucket: string, rps: number, burst: number, returned: number, onStoreDown: 'allow' | 'deny'): Promise<ClusterLease> {
    // A quarter of a fair share of what is left per worker of this node (nodes count as a few more workers).
    const divisor = 4 * Math.max(1, this.workers()) * 4;
    try {
      const take = (this.redis as unknown as { switchyardTake(key: string, ...args: number[]): Promise<[number, number, number]> }).switchyardTake;
      const [granted, retryAfterMs, remaining] = await take.call(this.redis, `${this.prefix}rl:${bucket}`, rps, burst, returned, divisor);
      if (this.down) this.log.info('rate-limit: Redis answers again; cluster buckets count there');
      this.down = false;
      return { granted, retryAfterMs, remaining };
    } catch (err) {
      if (!this.down) this.log.warn({ err: (err as Error).message, onStoreDown }, 'rate-limit: Redis cannot be asked; cluster buckets follow onStoreDown');
      this.down = true;
      this.downAnswers[onStoreDown]++;
      return storeDownLease(onStoreDown);
    }
  }

  close(): void {
    this.redis.disconnect();
  }
}
