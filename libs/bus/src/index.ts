export * from './bus.js';
export * from './bus.errors.js';
export * from './bus.module.js';
export * from './transport/index.js';
export * from './credentials.js';
export * from './list-watch/list-watch.js';
