import { createHash } from 'node:crypto';
import type { AlertInstance } from '#domain';

/** An alert as Alertmanager's `POST /api/v2/alerts` takes it (postableAlert). */
export interface PostableAlert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  startsAt: string;
  endsAt?: string;
  generatorURL: string;
}

/**
 * The alert's back-link: the pod's events (its timeline in the API), or the node. Built
 * from the labels, so it names the same place after a restart.
 */
export function generatorUrl(base: string, labels: Record<string, string>): string {
  const root = base.replace(/\/+$/, '');
  if (labels.pod && labels.namespace) {
    return `${root}/api/v1/namespaces/${encodeURIComponent(labels.namespace)}/events?fieldSelector=${encodeURIComponent(`involvedObject.name=${labels.pod}`)}`;
  }
  if (labels.node) return `${root}/api/v1/nodes/${encodeURIComponent(labels.node)}`;
  return `${root}/api/v1/events`;
}

/**
 * A firing alert says it is valid until `validUntil` (now plus four resend intervals, as
 * Prometheus does), so Alertmanager resolves it by itself if the alerter stops sending; a
 * resolved one carries its real end.
 */
export function toPostable(alert: AlertInstance, base: string, validUntil: number): PostableAlert {
  return {
    labels: alert.labels,
    annotations: alert.annotations,
    startsAt: new Date(alert.startsAt).toISOString(),
    endsAt: new Date(alert.endsAt ?? validUntil).toISOString(),
    generatorURL: generatorUrl(base, alert.labels),
  };
}

/** A stable id of an alert episode for webhook receivers that dedupe: the labels and the start. */
export function fingerprint(alert: AlertInstance): string {
  return createHash('sha256').update(`${alert.key}@${alert.startsAt}`).digest('hex').slice(0, 16);
}
