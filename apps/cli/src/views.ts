import type { NodeObject, Pod } from '#contracts';
import type { KubeEvent } from '#domain/history';
import { podReadyColumn, podRestartsColumn, podStatusColumn } from './pod-columns.js';
import { age, renderTable } from './table.js';

/** `jetctl get pods`' table. */
export function podTable(pods: Pod[], withNamespace: boolean, wide: boolean, now: number): string {
  return renderTable(
    [...(withNamespace ? ['NAMESPACE'] : []), 'NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE', ...(wide ? ['IP', 'NODE'] : [])],
    pods.map((p) => [
      ...(withNamespace ? [p.metadata.namespace ?? ''] : []),
      p.metadata.name,
      podReadyColumn(p),
      podStatusColumn(p),
      podRestartsColumn(p),
      age(p.metadata.creationTimestamp, now),
      ...(wide ? [p.status.podIP ?? '<none>', p.spec.nodeName ?? '<none>'] : []),
    ]),
  );
}

/** The parts of a Node `jetctl get nodes` prints. */
export type NodeView = Pick<NodeObject, 'metadata'> & {
  spec?: { unschedulable?: boolean };
  status: Pick<NodeObject['status'], 'nodeInfo' | 'addresses'> & { conditions?: Array<{ type: string; status: string }> };
};

/** `jetctl get nodes`' table. */
export function nodeTable(nodes: NodeView[], wide: boolean): string {
  return renderTable(
    ['NAME', 'STATUS', 'VERSION', ...(wide ? ['INTERNAL-IP', 'OS-IMAGE', 'KERNEL-VERSION', 'CONTAINER-RUNTIME'] : [])],
    nodes.map((n) => {
      const ready = n.status.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
      return [
        n.metadata.name,
        `${ready ? 'Ready' : 'NotReady'}${n.spec?.unschedulable ? ',SchedulingDisabled' : ''}`,
        n.status.nodeInfo.kubeletVersion,
        ...(wide
          ? [
              n.status.addresses.find((a) => a.type === 'InternalIP')?.address ?? '<none>',
              n.status.nodeInfo.osImage,
              n.status.nodeInfo.kernelVersion,
              n.status.nodeInfo.containerRuntimeVersion,
            ]
          : []),
      ];
    }),
  );
}

/** `kubectl get events`' table. */
export function eventTable(events: KubeEvent[], now: number): string {
  return renderTable(
    ['LAST SEEN', 'TYPE', 'REASON', 'OBJECT', 'MESSAGE'],
    events.map((e) => [age(e.lastTimestamp, now), e.type, e.reason, `${e.involvedObject.kind.toLowerCase()}/${e.involvedObject.name}`, e.message]),
  );
}
