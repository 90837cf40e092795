import { routeAttributes } from './otlp-span.js';

/**
 * What every SERVER span of one route repeats, made at the route's first recorded span and
 * kept on its meter (one per route): its attributes, and its name for the method last seen.
 */
export class RouteSpans {
  readonly attributes: Buffer;
  private method = '';
  private spanName = '';

  constructor(private readonly route: string, tenant: string) {
    this.attributes = routeAttributes(route, tenant);
  }

  name(method: string): string {
    if (method !== this.method) {
      this.method = method;
      this.spanName = `${method} ${this.route}`;
    }
    return this.spanName;
  }
}
