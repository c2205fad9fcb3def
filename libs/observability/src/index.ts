export * from './metrics.js';
export * from './logger.js';
export * from './metrics.controller.js';
