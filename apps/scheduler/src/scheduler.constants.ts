/** Injection tokens of the scheduler. */
export const SCHEDULER_CONFIG = Symbol('SCHEDULER_CONFIG');
