export * from './container-runtime.port.js';
export * from './docker.runtime.js';
export * from './runtime.errors.js';
export * from './log-frames.js';
export * from './fake.runtime.js';
export * from './docker-process-stream.js';
export * from './pull-progress.js';
