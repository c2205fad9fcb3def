export * from './quantity.js';
export * from './pod-defaults.js';
export * from './pod-projection.js';
export * from './node-table.js';
export * from './pod-naming.js';
export * from './pod-status.js';
export * from './reconcile.js';
