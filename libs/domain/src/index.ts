export * from './quantity.js';
export * from './pod-defaults.js';
export * from './pod-projection.js';
export * from './node-table.js';
export * from './scheduling.js';
export * from './admission.js';
export * from './pod-naming.js';
export * from './pod-status.js';
export * from './reconcile.js';
export * from './backoff.js';
export * from './image-reference.js';
export * from './patch.js';
export * from './event-log.js';
export * from './event-correlator.js';
export * from './probe-tracker.js';
export * from './logs.js';
export * from './streams.js';
export * from './resource-usage.js';
export * from './node-lifecycle.js';
export * from './selectors.js';
export * from './selectable-fields.js';
export * from './patch-meta.js';
export * from './watch-cache.js';
export * from './printers.js';
export * from './lease.js';
export * from './path-under.js';
export * from './assignment-check.js';
export * from './restart-policy.js';
export * from './init-containers.js';
export * from './qos.js';
export * from './eviction.js';
export {
  ClusterReplay,
  buildTimeline,
  clock,
  compareRecorded,
  earliestHeartbeats,
  explainPod,
  heartbeatGaps,
  isAtOrBefore,
  podNodes,
  podSwimlanes,
  podUids,
  replayTo,
  selectMessages,
  seqTime,
  summarize,
  upTo,
} from './history/index.js';
export type * from './history/index.js';
export * from './namespace-table.js';
export * from './alerting.js';
export * from './config-table.js';
export * from './secret-box.js';
export * from './managed-fields/index.js';
export * from './container-env.js';
export * from './volumes.js';
export * from './security-context.js';
export * from './authorization.js';
export * from './pod-security.js';
export * from './credential-keyring.js';
export * from './local-storage-eviction.js';
export * from './image-gc.js';
export * from './compare-text.js';
