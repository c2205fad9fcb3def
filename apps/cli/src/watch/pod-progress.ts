import { STREAMS, SUBJECTS, type Pod, type PodStatus } from '#contracts';
import { pullProgressText, type RecordedMessage } from '#domain/history';
import type { StreamReader } from '../streams/stream-reader.js';

/** Waiting reasons that mean the pod will not become ready by itself. */
const FAILING = new Set([
  'ErrImagePull',
  'ImagePullBackOff',
  'InvalidImageName',
  'ErrImageNeverPull',
  'CreateContainerError',
  'RunContainerError',
  'CrashLoopBackOff',
]);

/** Why the pod failed to come up, from one of its status reports; undefined while it may still. */
export function failureOf(status: PodStatus): string | undefined {
  if (status.phase === 'Failed') return `pod Failed${status.reason ? `: ${status.reason}` : ''}${status.message ? `: ${status.message}` : ''}`;
  for (const c of status.containerStatuses ?? []) {
    const w = c.state.waiting;
    if (w?.reason && FAILING.has(w.reason)) return `container ${c.name}: ${w.reason}${w.message ? `: ${w.message}` : ''}`;
  }
  return undefined;
}

/** True once the pod is Ready, or has run to completion. */
export function doneOf(status: PodStatus): boolean {
  return status.phase === 'Succeeded' || status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
}

/** How long a Ready pod's missing Started events are waited for before Ready is printed. */
const STARTED_WAIT_MS = 2000;

/** How many of the pod's containers have started, by its status (running, or run and ended). */
export function containersStarted(status: PodStatus): number {
  return (status.containerStatuses ?? []).filter((c) => c.state.running !== undefined || c.state.terminated !== undefined).length;
}

export class PodProgressError extends Error {
  override readonly name = 'PodProgressError';
}

/**
 * Follows one pod through the streams from `fromSeq` (its pods-stream sequence when it was
 * written) and prints each step as it happens: Scheduled, Pulling (with the pull's progress),
 * Pulled, Created, Started, Ready. Resolves when it is Ready (or Succeeded); rejects with the reason when it fails or
 * `timeoutMs` runs out.
 */
export async function followPod(reader: StreamReader, pod: Pod, fromSeq: number, print: (line: string) => void, timeoutMs: number): Promise<void> {
  const ns = pod.metadata.namespace ?? 'default';
  const name = pod.metadata.name;
  const uid = pod.metadata.uid ?? '';
  let last = 'waiting to be scheduled';
  let settle: (error?: Error) => void = () => undefined;
  const finished = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new PodProgressError(`timed out after ${Math.round(timeoutMs / 1000)}s: ${last}`)), timeoutMs);
    settle = (error?: Error): void => {
      clearTimeout(timer);
      if (error) reject(error);
      else resolve();
    };
  });
  const seen = new Set<string>();
  let scheduled = false;
  /** Started events printed, and who waits for the next. */
  let started = 0;
  let onStarted: (() => void) | undefined;
  /**
   * Said once. The scheduler's own fact may be gone before the streams are read (the pod's
   * subject keeps only its newest facts), so the first word from the node says it too.
   */
  const scheduledTo = (nodeName: string): void => {
    if (scheduled) return;
    scheduled = true;
    print(`pod/${name}: Scheduled to ${(last = `node ${nodeName}`)}`);
  };
  const on = (m: RecordedMessage): void => {
    const e = m.envelope;
    const key = `${m.stream}/${m.seq}`;
    if (!e || seen.has(key)) return;
    seen.add(key);
    switch (e.type) {
      case 'PodScheduled':
        if (e.data.uid === uid) scheduledTo(e.data.nodeName);
        break;
      case 'PodUnschedulable':
        if (e.data.uid === uid) print(`pod/${name}: ${(last = `FailedScheduling: ${e.data.message}`)}`);
        break;
      case 'PodDeletionRequested':
      case 'PodEvicted':
        if (e.data.uid === uid) settle(new PodProgressError(`pod/${name} is being deleted`));
        break;
      case 'PodEvent':
        if (e.data.uid === uid) scheduledTo(e.data.nodeName);
        if (['Pulling', 'Pulled', 'Created', 'Started', 'Failed', 'BackOff', 'Unhealthy', 'Killing'].includes(e.data.reason))
          print(`pod/${name}: ${(last = `${e.data.reason}: ${e.data.message}`)}`);
        if (e.data.uid === uid && e.data.reason === 'Started') {
          started++;
          onStarted?.();
        }
        break;
      case 'ImagePullProgress':
        if (e.data.uid === uid) print(`pod/${name}: ${(last = `Pulling ${e.data.containerName}: ${pullProgressText(e.data)}`)}`);
        break;
      case 'PodStatusReported': {
        if (e.data.uid === uid) scheduledTo(e.data.nodeName);
        const failure = failureOf(e.data.status);
        if (failure) return settle(new PodProgressError(failure));
        if (doneOf(e.data.status)) {
          // The consumers deliver independently: first print the steps stored before this report.
          const status = e.data.status;
          void reader
            .readAll([
              { stream: STREAMS.pods, filter: SUBJECTS.pod(ns, name) },
              { stream: STREAMS.events, filter: `jetlet.events.*.${uid}` },
            ])
            .then(async (earlier) => {
              for (const x of earlier) if (x.storedMs <= m.storedMs && (x.stream !== STREAMS.pods || x.seq > fromSeq)) on(x);
              // A node sends its events apart from its status reports, so a container's Started
              // can be stored just after the report that says it runs: wait a moment for it.
              await startedEvents(containersStarted(status));
              print(`pod/${name}: ${status.phase === 'Succeeded' ? 'Completed' : 'Ready'}`);
              settle();
            }, settle);
        }
        break;
      }
      default:
        break;
    }
  };
  /** Resolves once `count` Started events were printed, or STARTED_WAIT_MS after it was asked. */
  const startedEvents = (count: number): Promise<void> =>
    new Promise((resolve) => {
      const timer = setTimeout(done, STARTED_WAIT_MS);
      function done(): void {
        clearTimeout(timer);
        onStarted = undefined;
        resolve();
      }
      onStarted = () => {
        if (started >= count) done();
      };
      onStarted();
    });
  const stops = await Promise.all([
    reader.follow({ stream: STREAMS.pods, filter: SUBJECTS.pod(ns, name), fromSeq: fromSeq + 1 }, on),
    reader.follow({ stream: STREAMS.pods, filter: `jetlet.podstatus.*.${uid}`, fromSeq: fromSeq + 1 }, on),
    reader.follow({ stream: STREAMS.events, filter: `jetlet.events.*.${uid}` }, on),
  ]);
  try {
    await finished;
  } finally {
    await Promise.all(stops.map((stop) => stop()));
  }
}
