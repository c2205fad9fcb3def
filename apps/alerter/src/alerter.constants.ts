/** Injection tokens of the alerter. */
export const ALERTER_CONFIG = Symbol('ALERTER_CONFIG');
export const ALERT_RULES = Symbol('ALERT_RULES');
