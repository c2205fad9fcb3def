import type { IncomingMessage } from 'node:http';

/** The request's media type, lower-cased and without parameters; undefined when it names none. */
export function mediaType(request: IncomingMessage): string | undefined {
  const type = request.headers['content-type']?.split(';')[0]?.trim().toLowerCase();
  return type === '' ? undefined : type;
}

/**
 * Whether the body is JSON: `application/json` or a `+json` type, or no type at all on a
 * create or replace, which kube-apiserver decodes with its first serializer, JSON
 * (`kubectl create --raw -f` sends none).
 */
export function isJsonBody(request: IncomingMessage): boolean {
  const type = mediaType(request);
  if (type === undefined) return request.method === 'POST' || request.method === 'PUT';
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));
}
