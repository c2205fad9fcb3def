import { Injectable } from '@nestjs/common';
import type { PodStatus } from '#contracts';

/** Clock slack when comparing Docker's start times with the agent's: both read the same host clock. */
const CLOCK_SLACK_MS = 1000;

/**
 * The pod start latency, as the kubelet's kubelet_pod_start_duration_seconds: from the
 * agent's first sighting of a pod to the first status in which every container runs,
 * recorded once per pod. A pod whose containers already ran before the agent saw it (an
 * agent restart adopting them) is not a start and is not recorded.
 */
@Injectable()
export class PodStartTracker {
  private readonly firstSeenMs = new Map<string, number>();
  private readonly recorded = new Set<string>();

  /** `observe` records one start duration in seconds (the agent's kubelet_pod_start_duration_seconds). */
  constructor(private readonly observe: (seconds: number) => void) {}

  /** The pod was assigned to this node; only the first sighting counts. */
  seen(uid: string, nowMs = Date.now()): void {
    if (!this.firstSeenMs.has(uid) && !this.recorded.has(uid)) this.firstSeenMs.set(uid, nowMs);
  }

  /** A status was computed for the pod; returns the start duration in seconds when this one recorded it. */
  statusComputed(uid: string, status: PodStatus, nowMs = Date.now()): number | undefined {
    const seenMs = this.firstSeenMs.get(uid);
    const statuses = status.containerStatuses ?? [];
    if (seenMs === undefined || statuses.length === 0 || !statuses.every((s) => s.state.running)) return undefined;
    this.firstSeenMs.delete(uid);
    this.recorded.add(uid);
    const adopted = statuses.some((s) => {
      const startedMs = Date.parse(s.state.running?.startedAt ?? '');
      return Number.isFinite(startedMs) && startedMs < seenMs - CLOCK_SLACK_MS;
    });
    if (adopted) return undefined;
    const seconds = (nowMs - seenMs) / 1000;
    this.observe(seconds);
    return seconds;
  }

  /** The pod left this node. */
  forget(uid: string): void {
    this.firstSeenMs.delete(uid);
    this.recorded.delete(uid);
  }
}
