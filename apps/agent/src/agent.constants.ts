/** Injection tokens of the agent. */
export const AGENT_CONFIG = Symbol('AGENT_CONFIG');
export const RUNTIME = Symbol('RUNTIME');
