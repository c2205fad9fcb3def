/** A publish lost an optimistic-concurrency race: the subject moved past the expected sequence. */
export class SequenceConflictError extends Error {
  override readonly name = 'SequenceConflictError';
  constructor(
    readonly subject: string,
    readonly expected: number,
    options?: ErrorOptions,
  ) {
    super(`${subject} is no longer at sequence ${expected}`, options);
  }
}

/** The bus could not be reached or answered with an error. */
export class BusError extends Error {
  override readonly name: string = 'BusError';
}

/**
 * The bus cannot take a write now: the connection is down, JetStream does not answer yet
 * (a restarted server recovering its streams), or the acknowledgement did not come in time.
 * A write that timed out may still have been stored; its message id makes a retry a duplicate.
 */
export class BusUnavailableError extends BusError {
  override readonly name = 'BusUnavailableError';
}

/** A message larger than the server's max_payload: publishing it would fail, so it is refused first. */
export class MessageTooLargeError extends Error {
  override readonly name = 'MessageTooLargeError';
  constructor(
    readonly subject: string,
    readonly bytes: number,
    readonly maxBytes: number,
    options?: ErrorOptions,
  ) {
    super(`a message of ${bytes} bytes for ${subject} exceeds the bus's limit of ${maxBytes} bytes`, options);
  }
}
