import type { NodeObject, Pod } from '#contracts';
import type { KubeEvent } from './event-log.js';

/** The field selector labels Kubernetes supports for pods (`pkg/apis/core/v1/conversion.go`). */
export const POD_SELECTABLE_FIELDS = [
  'metadata.name',
  'metadata.namespace',
  'spec.nodeName',
  'spec.restartPolicy',
  'spec.schedulerName',
  'spec.serviceAccountName',
  'spec.hostNetwork',
  'status.phase',
  'status.podIP',
  'status.podIPs',
  'status.nominatedNodeName',
] as const;

/** The field selector labels Kubernetes supports for events. */
export const EVENT_SELECTABLE_FIELDS = [
  'metadata.name',
  'metadata.namespace',
  'involvedObject.kind',
  'involvedObject.namespace',
  'involvedObject.name',
  'involvedObject.uid',
  'involvedObject.apiVersion',
  'involvedObject.resourceVersion',
  'involvedObject.fieldPath',
  'reason',
  'reportingComponent',
  'source',
  'type',
] as const;

/** The field selector labels Kubernetes supports for nodes. */
export const NODE_SELECTABLE_FIELDS = ['metadata.name', 'spec.unschedulable'] as const;

/** The field selector labels Kubernetes supports for namespaces. */
export const NAMESPACE_SELECTABLE_FIELDS = ['metadata.name', 'status.phase'] as const;

/** A pod's selectable fields as strings; absent ones are "" (so `spec.nodeName=` selects unbound pods), as Kubernetes. */
export function podFields(pod: Pod): Record<string, string> {
  const spec = pod.spec as Pod['spec'] & { schedulerName?: string; serviceAccountName?: string; hostNetwork?: boolean };
  const status = pod.status as Pod['status'] & { nominatedNodeName?: string; podIPs?: Array<{ ip: string }> };
  return {
    'metadata.name': pod.metadata.name,
    'metadata.namespace': pod.metadata.namespace ?? '',
    'spec.nodeName': spec.nodeName ?? '',
    'spec.restartPolicy': spec.restartPolicy ?? 'Always',
    'spec.schedulerName': spec.schedulerName ?? 'default-scheduler',
    'spec.serviceAccountName': spec.serviceAccountName ?? '',
    'spec.hostNetwork': String(spec.hostNetwork ?? false),
    'status.phase': status.phase ?? '',
    'status.podIP': status.podIP ?? '',
    'status.podIPs': status.podIPs?.[0]?.ip ?? status.podIP ?? '',
    'status.nominatedNodeName': status.nominatedNodeName ?? '',
  };
}

/** An event's selectable fields; `source` is the reporting component, as Kubernetes. */
export function eventFields(event: KubeEvent): Record<string, string> {
  const involved = event.involvedObject as KubeEvent['involvedObject'] & { resourceVersion?: string };
  const reporting = (event as KubeEvent & { reportingComponent?: string }).reportingComponent;
  return {
    'metadata.name': event.metadata.name,
    'metadata.namespace': event.metadata.namespace,
    'involvedObject.kind': involved.kind,
    'involvedObject.namespace': involved.namespace,
    'involvedObject.name': involved.name,
    'involvedObject.uid': involved.uid,
    'involvedObject.apiVersion': involved.apiVersion,
    'involvedObject.resourceVersion': involved.resourceVersion ?? '',
    'involvedObject.fieldPath': involved.fieldPath ?? '',
    reason: event.reason,
    reportingComponent: reporting ?? '',
    source: event.source.component,
    type: event.type,
  };
}

/** A node's selectable fields. */
export function nodeFields(node: Pick<NodeObject, 'metadata' | 'spec'>): Record<string, string> {
  return { 'metadata.name': node.metadata.name, 'spec.unschedulable': String(node.spec.unschedulable ?? false) };
}

/** A namespace's selectable fields. */
export function namespaceFields(namespace: { metadata: { name: string }; status?: { phase?: string } }): Record<string, string> {
  return { 'metadata.name': namespace.metadata.name, 'status.phase': namespace.status?.phase ?? '' };
}
