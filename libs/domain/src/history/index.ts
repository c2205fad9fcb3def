// What reading the log back needs, without the agent's runtime code (jetctl loads only this).
export * from './recorded.js';
export * from './summary.js';
export * from './timeline.js';
export * from './cluster-replay.js';
export * from './explain.js';
export * from './swimlanes.js';
export { goDuration } from '../backoff.js';
export { PodProjection, podView } from '../pod-projection.js';
export type { KubeEvent } from '../event-log.js';
