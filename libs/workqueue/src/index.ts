export * from './backoff.js';
export * from './clock.js';
export * from './coalescing-queue.js';
