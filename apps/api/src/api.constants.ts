/** Injection tokens of the API. */
export const API_CONFIG = Symbol('API_CONFIG');
