/**
 * The gRPC-Web content types (github.com/grpc/grpc doc/PROTOCOL-WEB.md) and the gRPC
 * ones they become upstream. `application/grpc-web[+suffix]` carries the gRPC framing as
 * it is ('binary'); `application/grpc-web-text[+suffix]` carries it base64-encoded
 * ('text'), for clients that can only read a response as text.
 */
export type GrpcWebMode = 'binary' | 'text';

/** `application/grpc-web` or `-text`, an optional `+suffix` (`+proto`, `+json`), parameters after `;` ignored. */
const WEB_TYPE = /^application\/grpc-web(-text)?(\+[a-z0-9._-]+)?$/;

/** The media type alone: lower case, parameters and spaces dropped. */
function mediaType(contentType: string): string {
  const semi = contentType.indexOf(';');
  return (semi === -1 ? contentType : contentType.slice(0, semi)).trim().toLowerCase();
}

/** The request's gRPC-Web mode by its Content-Type; null when it is not gRPC-Web. */
export function grpcWebMode(contentType: string | undefined): GrpcWebMode | null {
  if (contentType === undefined) return null;
  const m = WEB_TYPE.exec(mediaType(contentType));
  if (m === null) return null;
  return m[1] === undefined ? 'binary' : 'text';
}

/**
 * The mode the client reads the answer in: text when it sent text, or when its Accept
 * asks for text (a binary request may want a text answer: PROTOCOL-WEB.md, "Text-encoded
 * (response) streams"; Envoy reads Accept for this too).
 */
export function grpcWebResponseMode(requestMode: GrpcWebMode, accept: string | undefined): GrpcWebMode {
  if (requestMode === 'text' || accept === undefined) return requestMode;
  return accept.split(',').some((a) => grpcWebMode(a) === 'text') ? 'text' : 'binary';
}

/** The Content-Type the upstream gets: `application/grpc` with the client's `+suffix`. */
export function grpcUpstreamContentType(contentType: string): string {
  const m = WEB_TYPE.exec(mediaType(contentType));
  return `application/grpc${m?.[2] ?? ''}`;
}

/**
 * The Content-Type the client gets for an upstream answer of `upstreamType`
 * (`application/grpc[+suffix]`): the gRPC-Web type of `mode` with the same suffix.
 */
export function grpcWebContentType(upstreamType: string | undefined, mode: GrpcWebMode): string {
  const m = upstreamType === undefined ? null : /^application\/grpc(\+[a-z0-9._-]+)?$/.exec(mediaType(upstreamType));
  return `application/grpc-web${mode === 'text' ? '-text' : ''}${m?.[1] ?? '+proto'}`;
}

/** True when `contentType` is a gRPC answer's (`application/grpc` or `application/grpc+suffix`). */
export function isGrpcContentType(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  return /^application\/grpc(\+[a-z0-9._-]+)?$/.test(mediaType(contentType));
}
