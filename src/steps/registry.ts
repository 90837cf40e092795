import type { StepDefinition } from './step.js';
import { StepRegistry } from './step-registry.js';
import { rateLimit } from './rate-limit.js';
import { orch } from './orch.js';
import { requestHeaders } from './request-headers.js';
import { responseHeaders } from './response-headers.js';
import { pathRewrite } from './path-rewrite.js';
import { queryParams } from './query-params.js';
import { methodRestriction } from './method-restriction.js';
import { requestId } from './request-id.js';
import { echo } from './echo.js';
import { ipRestriction } from './ip-restriction.js';
import { botDetection } from './bot-detection.js';
import { cors } from './cors.js';
import { keyAuth } from './key-auth.js';
import { faultInjection } from './fault-injection.js';
import { requestSizeLimit } from './request-size-limit.js';
import { timeout } from './timeout.js';
import { concurrencyLimit } from './concurrency-limit.js';
import { accessLog } from './access-log.js';
import { forwardAuth } from './forward-auth.js';
import { httpCallout } from './http-callout.js';
import { basicAuth } from './basic-auth.js';
import { jwtAuth } from './identity/jwt-auth.js';
import { oauthIntrospection } from './identity/oauth-introspection.js';
import { circuitBreaker } from './circuit-breaker.js';
import { trafficSplit } from './traffic-split.js';
import { bodyValidate } from './body-validate.js';
import { mirror } from './mirror.js';
import { retry } from './retry.js';
import { cache } from './cache.js';
import { compression } from './compression.js';
import { clientCert } from './identity/client-cert.js';
import { oidcLogin } from './identity/oidc-login.js';

/** Every built-in step, by code: a constant list. What a process knows besides comes from its StepRegistry. */
export const BUILTIN_STEPS: ReadonlyMap<string, StepDefinition> = new Map(
  (
    [
      rateLimit, orch, requestHeaders, responseHeaders, pathRewrite, queryParams, methodRestriction, requestId, echo,
      ipRestriction, botDetection, cors, keyAuth, faultInjection, requestSizeLimit, timeout, concurrencyLimit, accessLog,
      forwardAuth, httpCallout, basicAuth, jwtAuth, oauthIntrospection, circuitBreaker, trafficSplit, bodyValidate, mirror, retry, cache, compression, clientCert,
      oidcLogin,
    ] as StepDefinition[]
  ).map((s) => [s.code, s]),
);

/** The registry of a gateway without step packages (tests, the docs of the built-ins); it never changes. */
export const BUILTINS = new StepRegistry(BUILTIN_STEPS);
