/** A log request that cannot be served, with the HTTP status and Kubernetes reason it answers. */
export class LogRequestError extends Error {
  override readonly name = 'LogRequestError';
  constructor(
    readonly code: 400 | 404 | 500,
    readonly reason: 'BadRequest' | 'NotFound' | 'InternalError',
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}
