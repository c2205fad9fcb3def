/**
 * Bounds on numbers and sizes a manifest may carry: what Kubernetes bounds, and where
 * jetlet's own machinery (Node timers, Docker, NATS) cannot honour more, that instead.
 */

/** The longest a Node timer waits (2^31-1 ms), in whole seconds: about 24.8 days. */
export const MAX_TIMER_SECONDS = Math.floor((2 ** 31 - 1) / 1000);
/** Kubernetes' int32 fields (probe thresholds). */
export const INT32_MAX = 2 ** 31 - 1;
/** Docker's smallest memory limit (6 MiB): a smaller one fails every container start. */
export const DOCKER_MIN_MEMORY_BYTES = 6 * 1024 * 1024;
/** Docker's smallest CPU limit (0.01 CPU = 10m): a smaller one fails every container start. */
export const DOCKER_MIN_CPU_MILLIS = 10;
/** Containers in one pod. Kubernetes bounds them only by the object's size; each is a Docker container here. */
export const MAX_CONTAINERS = 64;
/** Kubernetes' largest stored object (etcd's request limit), in bytes. */
export const MAX_OBJECT_BYTES = 1.5 * 1024 * 1024;
/** Deepest nesting of a request body; a pod manifest is about 8 deep. */
export const MAX_BODY_DEPTH = 100;
/** Most elements in any one array of a request body. */
export const MAX_ARRAY_ELEMENTS = 10_000;
