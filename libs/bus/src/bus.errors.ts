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
  override readonly name = 'BusError';
}
