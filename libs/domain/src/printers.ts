/**
 * Server-side printing: the `meta.k8s.io/v1` Table kubectl shows, with the columns and cells
 * of kubectl's own printers (`pkg/printers/internalversion/printers.go`). Pure: the time is
 * an argument. The server fills every column, wide ones included (priority 1); kubectl hides
 * those unless `-o wide`.
 */

export interface TableColumnDefinition {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

export interface TableRow {
  cells: Array<string | number>;
  conditions?: Array<{ type: string; status: string; reason: string; message: string }>;
  object?: object;
}

/** Any object the API serves: what printing reads from it. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name?: string;
    namespace?: string;
    creationTimestamp?: string;
    labels?: Record<string, string>;
    deletionTimestamp?: string;
    [k: string]: unknown;
  };
  [k: string]: unknown;
}

const column = (name: string, description: string, priority = 0, format = ''): TableColumnDefinition => ({
  name,
  type: 'string',
  format,
  description,
  priority,
});
const NAME = column('Name', 'Name must be unique within a namespace.', 0, 'name');
const AGE = column(
  'Age',
  'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.',
);

/** apimachinery's `duration.HumanDuration`: "45s", "3m20s", "5h", "2d3h", "3y". */
export function humanDuration(ms: number): string {
  const seconds = Math.trunc(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.trunc(seconds / 60);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.trunc(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) return hours % 24 === 0 ? `${Math.trunc(hours / 24)}d` : `${Math.trunc(hours / 24)}d${hours % 24}h`;
  if (hours < 24 * 365 * 2) return `${Math.trunc(hours / 24)}d`;
  if (hours < 24 * 365 * 8) {
    const days = Math.trunc(hours / 24) % 365;
    return days === 0 ? `${Math.trunc(hours / 24 / 365)}y` : `${Math.trunc(hours / 24 / 365)}y${days}d`;
  }
  return `${Math.trunc(hours / 24 / 365)}y`;
}

/** kubectl's `translateTimestampSince`. */
export function age(timestamp: string | undefined, nowMs: number): string {
  if (!timestamp) return '<unknown>';
  const at = Date.parse(timestamp);
  return Number.isNaN(at) ? '<unknown>' : humanDuration(nowMs - at);
}

interface ContainerStateLike {
  waiting?: { reason?: string };
  running?: { startedAt?: string };
  terminated?: { reason?: string; exitCode?: number; signal?: number; finishedAt?: string };
}

interface PodLike extends KubeObject {
  spec: {
    containers: unknown[];
    initContainers?: Array<{ name: string; restartPolicy?: string }>;
    nodeName?: string;
    readinessGates?: Array<{ conditionType: string }>;
  };
  status?: {
    phase?: string;
    reason?: string;
    podIP?: string;
    podIPs?: Array<{ ip: string }>;
    nominatedNodeName?: string;
    conditions?: Array<{ type: string; status: string; reason?: string }>;
    containerStatuses?: Array<{ name: string; ready?: boolean; restartCount?: number; state?: ContainerStateLike; lastState?: ContainerStateLike }>;
    initContainerStatuses?: Array<{
      name: string;
      ready?: boolean;
      started?: boolean;
      restartCount?: number;
      state?: ContainerStateLike;
      lastState?: ContainerStateLike;
    }>;
  };
}

export const POD_COLUMNS: TableColumnDefinition[] = [
  NAME,
  column('Ready', 'The aggregate readiness state of this pod for accepting traffic.'),
  column('Status', 'The aggregate status of the containers in this pod.'),
  column('Restarts', 'The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.'),
  AGE,
  column('IP', 'podIP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.', 1),
  column('Node', 'NodeName indicates in which node this pod is scheduled.', 1),
  column('Nominated Node', 'nominatedNodeName is set only when this pod preempts other pods on the node.', 1),
  column('Readiness Gates', 'If specified, all readiness gates will be evaluated for pod readiness.', 1),
];

/** One pod's row, as kubectl's `printPod` computes READY, STATUS and RESTARTS. */
export function podRow(pod: PodLike, nowMs: number): TableRow {
  const status = pod.status ?? {};
  let restarts = 0;
  let initRestarts = 0;
  let total = pod.spec.containers.length;
  let ready = 0;
  let lastRestart = 0;
  let lastInitRestart = 0;
  let reason = status.reason || status.phase || '';
  if ((status.conditions ?? []).some((c) => c.type === 'PodScheduled' && c.reason === 'SchedulingGated')) reason = 'SchedulingGated';
  const sidecar = new Set((pod.spec.initContainers ?? []).filter((c) => c.restartPolicy === 'Always').map((c) => c.name));
  total += sidecar.size;
  const finished = (s: ContainerStateLike | undefined): number => (s?.terminated?.finishedAt ? Date.parse(s.terminated.finishedAt) : 0);

  let initializing = false;
  const inits = status.initContainerStatuses ?? [];
  for (let i = 0; i < inits.length; i++) {
    const c = inits[i];
    if (!c) continue;
    restarts += c.restartCount ?? 0;
    lastRestart = Math.max(lastRestart, finished(c.lastState));
    if (sidecar.has(c.name)) {
      initRestarts += c.restartCount ?? 0;
      lastInitRestart = Math.max(lastInitRestart, finished(c.lastState));
    }
    const t = c.state?.terminated;
    if (t && t.exitCode === 0) continue;
    if (sidecar.has(c.name) && c.started) {
      if (c.ready) ready++;
      continue;
    }
    if (t) reason = t.reason ? `Init:${t.reason}` : t.signal ? `Init:Signal:${t.signal}` : `Init:ExitCode:${t.exitCode ?? 0}`;
    else if (c.state?.waiting?.reason && c.state.waiting.reason !== 'PodInitializing') reason = `Init:${c.state.waiting.reason}`;
    else reason = `Init:${i}/${pod.spec.initContainers?.length ?? 0}`;
    initializing = true;
    break;
  }

  const initialized = (status.conditions ?? []).some((c) => c.type === 'Initialized' && c.status === 'True');
  if (!initializing || initialized) {
    restarts = initRestarts;
    lastRestart = lastInitRestart;
    let hasRunning = false;
    const containers = status.containerStatuses ?? [];
    for (let i = containers.length - 1; i >= 0; i--) {
      const c = containers[i];
      if (!c) continue;
      restarts += c.restartCount ?? 0;
      lastRestart = Math.max(lastRestart, finished(c.lastState));
      const t = c.state?.terminated;
      if (c.state?.waiting?.reason) reason = c.state.waiting.reason;
      else if (t?.reason) reason = t.reason;
      else if (t) reason = t.signal ? `Signal:${t.signal}` : `ExitCode:${t.exitCode ?? 0}`;
      else if (c.ready && c.state?.running) {
        hasRunning = true;
        ready++;
      }
    }
    if (reason === 'Completed' && hasRunning) {
      reason = (status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True') ? 'Running' : 'NotReady';
    }
  }
  if (pod.metadata.deletionTimestamp && status.reason === 'NodeLost') reason = 'Unknown';
  else if (pod.metadata.deletionTimestamp && status.phase !== 'Succeeded' && status.phase !== 'Failed') reason = 'Terminating';

  const restartsText = restarts !== 0 && lastRestart > 0 ? `${restarts} (${humanDuration(nowMs - lastRestart)} ago)` : String(restarts);
  const gates = pod.spec.readinessGates ?? [];
  const gatesText =
    gates.length === 0
      ? '<none>'
      : `${gates.filter((g) => (status.conditions ?? []).find((c) => c.type === g.conditionType)?.status === 'True').length}/${gates.length}`;
  const row: TableRow = {
    cells: [
      pod.metadata.name ?? '',
      `${ready}/${total}`,
      reason,
      restartsText,
      age(pod.metadata.creationTimestamp, nowMs),
      status.podIPs?.[0]?.ip || status.podIP || '<none>',
      pod.spec.nodeName || '<none>',
      status.nominatedNodeName || '<none>',
      gatesText,
    ],
  };
  if (status.phase === 'Succeeded')
    row.conditions = [{ type: 'Completed', status: 'True', reason: 'Succeeded', message: 'The pod has completed successfully.' }];
  if (status.phase === 'Failed') row.conditions = [{ type: 'Completed', status: 'True', reason: 'Failed', message: 'The pod failed.' }];
  return row;
}

interface NodeLike extends KubeObject {
  spec: { unschedulable?: boolean };
  status: {
    conditions?: Array<{ type: string; status: string }>;
    addresses?: Array<{ type: string; address: string }>;
    nodeInfo?: { kubeletVersion?: string; osImage?: string; kernelVersion?: string; containerRuntimeVersion?: string };
  };
}

export const NODE_COLUMNS: TableColumnDefinition[] = [
  NAME,
  column('Status', 'The status of the node'),
  column('Roles', 'The roles of the node'),
  AGE,
  column('Version', 'Kubelet Version reported by the node.'),
  column('Internal-IP', 'List of addresses reachable to the node. Queried from cloud provider, if available.', 1),
  column('External-IP', 'List of addresses reachable to the node. Queried from cloud provider, if available.', 1),
  column('OS-Image', 'OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).', 1),
  column('Kernel-Version', "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).", 1),
  column('Container-Runtime', 'ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2).', 1),
];

/** One node's row: STATUS is Ready / NotReady / Unknown, then SchedulingDisabled when cordoned, as `printNode`. */
export function nodeRow(node: NodeLike, nowMs: number): TableRow {
  const readyCondition = (node.status.conditions ?? []).find((c) => c.type === 'Ready');
  const status = readyCondition ? [readyCondition.status === 'True' ? 'Ready' : 'NotReady'] : ['Unknown'];
  if (node.spec.unschedulable) status.push('SchedulingDisabled');
  const roles = new Set<string>();
  for (const [key, value] of Object.entries(node.metadata.labels ?? {})) {
    if (key.startsWith('node-role.kubernetes.io/') && key.length > 'node-role.kubernetes.io/'.length) roles.add(key.slice('node-role.kubernetes.io/'.length));
    else if (key === 'kubernetes.io/role' && value) roles.add(value);
  }
  const address = (type: string): string => node.status.addresses?.find((a) => a.type === type)?.address ?? '<none>';
  const info = node.status.nodeInfo ?? {};
  return {
    cells: [
      node.metadata.name ?? '',
      status.join(','),
      roles.size > 0 ? [...roles].sort().join(',') : '<none>',
      age(node.metadata.creationTimestamp, nowMs),
      info.kubeletVersion ?? '',
      address('InternalIP'),
      address('ExternalIP'),
      info.osImage || '<unknown>',
      info.kernelVersion || '<unknown>',
      info.containerRuntimeVersion || '<unknown>',
    ],
  };
}

interface EventLike extends KubeObject {
  involvedObject: { kind?: string; name?: string; fieldPath?: string };
  reason?: string;
  message?: string;
  type?: string;
  source?: { component?: string; host?: string };
  firstTimestamp?: string;
  lastTimestamp?: string;
  count?: number;
}

export const EVENT_COLUMNS: TableColumnDefinition[] = [
  column('Last Seen', 'The time at which the most recent occurrence of this event was recorded.'),
  column('Type', 'Type of this event (Normal, Warning), new types could be added in the future'),
  column('Reason', "This should be a short, machine understandable string that gives the reason for the transition into the object's current status."),
  column('Object', 'The object that this event is about.'),
  column(
    'Subobject',
    'If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement.',
    1,
  ),
  column('Source', 'The component reporting this event. Should be a short machine understandable string.', 1),
  column('Message', 'A human-readable description of the status of this operation.'),
  column('First Seen', 'The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)', 1),
  column('Count', 'The number of times this event has occurred.', 1),
  { ...NAME, priority: 1 },
];

/** One event's row, as `printEvent`. */
export function eventRow(event: EventLike, nowMs: number): TableRow {
  const first = age(event.firstTimestamp, nowMs);
  const last = event.lastTimestamp ? age(event.lastTimestamp, nowMs) : first;
  const kind = (event.involvedObject.kind ?? '').toLowerCase();
  const target = event.involvedObject.name ? `${kind}/${event.involvedObject.name}` : kind;
  const source = event.source?.host ? `${event.source.component ?? ''}, ${event.source.host}` : (event.source?.component ?? '');
  return {
    cells: [
      last,
      event.type ?? '',
      event.reason ?? '',
      target,
      event.involvedObject.fieldPath ?? '',
      source,
      (event.message ?? '').trim(),
      first,
      event.count || 1,
      event.metadata.name ?? '',
    ],
  };
}

export const NAMESPACE_COLUMNS: TableColumnDefinition[] = [NAME, column('Status', 'The status of the namespace'), AGE];

/** One namespace's row. */
export function namespaceRow(namespace: KubeObject & { status?: { phase?: string } }, nowMs: number): TableRow {
  return { cells: [namespace.metadata.name ?? '', namespace.status?.phase ?? '', age(namespace.metadata.creationTimestamp, nowMs)] };
}

export const CONFIGMAP_COLUMNS: TableColumnDefinition[] = [NAME, { ...column('Data', 'Data contains the configuration data.'), type: 'integer' }, AGE];
export const SECRET_COLUMNS: TableColumnDefinition[] = [
  NAME,
  column('Type', 'Used to facilitate programmatic handling of secret data.'),
  { ...column('Data', 'Data contains the secret data.'), type: 'integer' },
  AGE,
];

type ConfigLike = KubeObject & { data?: Record<string, string>; binaryData?: Record<string, string>; type?: string };

/** One ConfigMap's row: its number of keys, text and binary. */
export function configMapRow(object: ConfigLike, nowMs: number): TableRow {
  const keys = Object.keys(object.data ?? {}).length + Object.keys(object.binaryData ?? {}).length;
  return { cells: [object.metadata.name ?? '', keys, age(object.metadata.creationTimestamp, nowMs)] };
}

/** One Secret's row: its type and number of keys (never a value). */
export function secretRow(object: ConfigLike, nowMs: number): TableRow {
  return { cells: [object.metadata.name ?? '', object.type ?? '', Object.keys(object.data ?? {}).length, age(object.metadata.creationTimestamp, nowMs)] };
}

export const LEASE_COLUMNS: TableColumnDefinition[] = [
  NAME,
  column(
    'Holder',
    'holderIdentity contains the identity of the holder of a current lease. If Coordinated Leader Election is used, the holder identity must be equal to the elected LeaseCandidate.metadata.name field.',
  ),
  AGE,
];

/** One Lease's row: who holds it (empty once let go). */
export function leaseRow(lease: KubeObject & { spec?: { holderIdentity?: string } }, nowMs: number): TableRow {
  return { cells: [lease.metadata.name ?? '', lease.spec?.holderIdentity ?? '', age(lease.metadata.creationTimestamp, nowMs)] };
}

/** Columns of kinds without a printer of their own: NAME and AGE, as the API server's default table. */
export const DEFAULT_COLUMNS: TableColumnDefinition[] = [NAME, AGE];

const PRINTERS: Record<string, { columns: TableColumnDefinition[]; row: (o: never, nowMs: number) => TableRow }> = {
  Pod: { columns: POD_COLUMNS, row: podRow },
  Node: { columns: NODE_COLUMNS, row: nodeRow },
  Event: { columns: EVENT_COLUMNS, row: eventRow },
  Namespace: { columns: NAMESPACE_COLUMNS, row: namespaceRow },
  ConfigMap: { columns: CONFIGMAP_COLUMNS, row: configMapRow },
  Secret: { columns: SECRET_COLUMNS, row: secretRow },
  Lease: { columns: LEASE_COLUMNS, row: leaseRow },
};

/** The PartialObjectMetadata of an object (its metadata alone). */
export function partialObjectMetadata(object: KubeObject): { kind: 'PartialObjectMetadata'; apiVersion: 'meta.k8s.io/v1'; metadata: KubeObject['metadata'] } {
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: object.metadata };
}

export type IncludeObject = 'None' | 'Metadata' | 'Object';

/** A Table of `objects` of one `kind`; each row carries the object, its metadata or nothing, as `includeObject` asks. */
export function toTable(
  kind: string,
  objects: KubeObject[],
  options: { nowMs: number; includeObject: IncludeObject; resourceVersion?: string; apiVersion?: string },
): object {
  const printer = PRINTERS[kind];
  const rows = objects.map((o) => {
    const row: TableRow = printer
      ? printer.row(o as never, options.nowMs)
      : { cells: [o.metadata.name ?? '', age(o.metadata.creationTimestamp, options.nowMs)] };
    if (options.includeObject === 'Object') row.object = o;
    else if (options.includeObject === 'Metadata') row.object = partialObjectMetadata(o);
    return row;
  });
  return {
    kind: 'Table',
    apiVersion: options.apiVersion ?? 'meta.k8s.io/v1',
    metadata: options.resourceVersion === undefined ? {} : { resourceVersion: options.resourceVersion },
    columnDefinitions: printer?.columns ?? DEFAULT_COLUMNS,
    rows,
  };
}
