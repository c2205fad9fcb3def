/** Injection tokens of the alerter. */
export const ALERTER_CONFIG = Symbol('ALERTER_CONFIG');
export const ALERT_RULES = Symbol('ALERT_RULES');
/** The clock the evaluation loop reads: a test swaps it, never the logic. */
export const CLOCK = Symbol('CLOCK');

export interface Clock {
  now(): number;
}
