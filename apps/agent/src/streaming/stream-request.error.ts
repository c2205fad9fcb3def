/** A stream request that cannot be served, with the HTTP status and Kubernetes reason it answers. */
export class StreamRequestError extends Error {
  override readonly name = 'StreamRequestError';
  constructor(
    readonly code: 400 | 404 | 500 | 501,
    readonly reason: 'BadRequest' | 'NotFound' | 'InternalError' | 'NotImplemented',
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}
