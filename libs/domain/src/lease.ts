import type { LeaseRenewedEvent } from '#contracts';

/** Where the API shows jetlet's leader-election leases, as Kubernetes keeps its control plane's. */
export const LEASE_NAMESPACE = 'kube-system';

/** Kubernetes coordination.k8s.io/v1 Lease, as the API shows a lease of the leases stream (a type, so it is a KubeObject to the printers). */
export type LeaseObject = {
  apiVersion: 'coordination.k8s.io/v1';
  kind: 'Lease';
  metadata: { name: string; namespace: string; resourceVersion: string; creationTimestamp: string };
  spec: {
    holderIdentity: string;
    leaseDurationSeconds: number;
    acquireTime: string;
    renewTime: string;
    leaseTransitions: number;
  };
};

/**
 * A time as Kubernetes' MicroTime writes it, RFC 3339 with six fractional digits
 * (`2026-12-07T17:36:23.123000Z`): typed clients parse the spec's times in exactly that form.
 */
export function microTime(iso: string): string {
  const at = Date.parse(iso);
  return Number.isNaN(at) ? iso : new Date(at).toISOString().replace(/Z$/, '000Z');
}

/** A time as metadata's timestamps are written, RFC 3339 to the second (`2026-12-07T17:36:23Z`). */
function rfc3339(iso: string): string {
  const at = Date.parse(iso);
  return Number.isNaN(at) ? iso : new Date(at).toISOString().replace(/\.\d+Z$/, 'Z');
}

/**
 * The Lease view of a lease's last record: `seq`, its stream sequence, is its
 * resourceVersion; `createdAt`, when the leases stream was made, stands for its creation,
 * since the stream keeps only a lease's last records.
 */
export function leaseView(lease: LeaseRenewedEvent, seq: number, createdAt: string): LeaseObject {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: lease.name, namespace: LEASE_NAMESPACE, resourceVersion: String(seq), creationTimestamp: rfc3339(createdAt) },
    spec: {
      holderIdentity: lease.holderIdentity,
      leaseDurationSeconds: lease.leaseDurationSeconds,
      acquireTime: microTime(lease.acquireTime),
      renewTime: microTime(lease.renewTime),
      leaseTransitions: lease.leaseTransitions,
    },
  };
}
