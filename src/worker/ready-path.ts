import type { Router } from './data-server.js';
import { staticReply, type StaticReply } from './response-head.js';

const HEADERS = { 'content-type': 'application/json', 'cache-control': 'no-store' };
const READY = staticReply(200, '{"ready":true}', HEADERS);
const NOT_READY = staticReply(503, '{"ready":false}', HEADERS);

/**
 * worker.json `readiness.dataPath` on the data port: the node's verdict, as the supervisor
 * last sent it (`readiness` messages), answered before routing with a reply built once.
 * The body says no more than ready or not: the data port faces clients, the admin port's
 * `/readyz` says why. A worker is not ready until told otherwise.
 */
export class ReadyPath {
  private reply: StaticReply = NOT_READY;

  set(ready: boolean): void {
    this.reply = ready ? READY : NOT_READY;
  }

  /** `route` with the readiness path in front of it: one string compare per request (bench/hot-path.mjs HOT_READY_PATH). */
  wrap(path: string, route: Router): Router {
    return (method, p, host, tls, rid) => (p === path ? this.reply : route(method, p, host, tls, rid));
  }
}
