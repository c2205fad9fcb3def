export * from './metrics.js';
export * from './logger.js';
