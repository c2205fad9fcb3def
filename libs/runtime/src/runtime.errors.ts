/**
 * The one error type the runtime adapters throw for engine failures, so callers can
 * handle "the engine said no" without knowing which engine or client library is behind
 * the port. The original error stays reachable as `cause`.
 */
export class RuntimeError extends Error {
  override readonly name = 'RuntimeError';
  /** The engine's HTTP status when it answered (e.g. 404, 409, 500); undefined for transport errors. */
  readonly statusCode?: number;

  constructor(message: string, options: { cause?: unknown; statusCode?: number } = {}) {
    super(message, { cause: options.cause });
    this.statusCode = options.statusCode;
  }
}

/** The HTTP status an engine client attached to an error, if any. */
export function statusCodeOf(err: unknown): number | undefined {
  if (typeof err !== 'object' || err === null || !('statusCode' in err)) return undefined;
  const code = err.statusCode;
  return typeof code === 'number' ? code : undefined;
}
