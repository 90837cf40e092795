import type { Operation } from './contract.js';

const REDIRECTS: Record<string, string> = {
  'oidc.login': "See Other: the OpenID provider's authorization endpoint",
  'oidc.callback': 'See Other: /console/, with the session cookie set',
};

/** OpenAPI 3.1 from the contract table; each operation carries its family and access. */
export function openApiDocument(ops: readonly Operation[], version: string): unknown {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of ops) {
    const params = [...op.path.matchAll(/\{(\w+)\}/g)].map((m) => ({
      name: m[1],
      in: 'path',
      required: true,
      schema: { type: 'string' },
    }));
    (paths[op.path] ??= {})[op.method.toLowerCase()] = {
      operationId: op.id,
      summary: op.summary,
      tags: [op.family],
      'x-family': op.family,
      'x-access': op.access,
      'x-auth': op.auth,
      'x-level': op.level,
      parameters: params,
      ...(op.auth === 'none' ? { security: [] } : {}),
      ...(op.body
        ? { requestBody: { required: true, content: { 'application/json': { schema: { type: 'object' } } } } }
        : {}),
      responses: {
        // What the handlers answer: key.issue creates (201), /metrics is Prometheus text, console sign-in redirects (303).
        ...(REDIRECTS[op.id] !== undefined
          ? { '303': { description: REDIRECTS[op.id] } }
          : {
              [op.id === 'key.issue' ? '201' : '200']: {
                description: op.id === 'key.issue' ? 'Created' : 'OK',
                content: op.id === 'metrics' ? { 'text/plain': { schema: { type: 'string' } } } : { 'application/json': { schema: { type: 'object' } } },
              },
            }),
        default: { description: 'Error envelope', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Switchyard admin API', version },
    paths,
    security: [{ bearer: [] }, { consoleSession: [] }],
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer' },
        // admin.oidc: accepted only with the header x-switchyard-console: 1 (CSRF).
        consoleSession: { type: 'apiKey', in: 'cookie', name: 'switchyard_session', description: 'A console session (admin.oidc sign-in); only with the header x-switchyard-console: 1' },
      },
      schemas: {
        Error: {
          type: 'object',
          required: ['code', 'message', 'traceId'],
          properties: { code: { type: 'string' }, message: { type: 'string' }, traceId: { type: 'string' } },
        },
      },
    },
  };
}
