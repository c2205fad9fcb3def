import { IsString, MinLength, ValidateBy } from '../class-validator.js';
import { TAINT_EFFECTS, type TaintEffect } from '../pod/toleration.model.js';

/** A node taint (Kubernetes core/v1 Taint): pods that do not tolerate it are kept off the node per its effect. */
export interface Taint {
  /** The taint key, a qualified name such as `dedicated` or `node.kubernetes.io/not-ready`. */
  key: string;
  /** The taint value; empty when unset. */
  value?: string;
  /** NoSchedule: not scheduled there; PreferNoSchedule: avoided when scoring; NoExecute: also evicted. */
  effect: TaintEffect;
  /** When a NoExecute taint was added (RFC 3339); set by its writer. */
  timeAdded?: string;
}

/** Kubernetes core/v1 Node, the subset jetlet reports. */
export interface NodeObject {
  metadata: {
    name: string;
    labels: Record<string, string>;
    /** Chosen by the agent at the node's first registration and kept by every later one. */
    uid?: string;
    /** The first registration's time (RFC 3339), kept by every later one. */
    creationTimestamp?: string;
    resourceVersion?: string;
  };
  spec: {
    /** True when new pods must not be scheduled onto the node (cordoned). */
    unschedulable?: boolean;
    /** Taints the node carries; written by the node's agent. */
    taints?: Taint[];
  };
  status: {
    capacity: Record<string, string>;
    allocatable: Record<string, string>;
    addresses: Array<{ type: 'InternalIP' | 'Hostname'; address: string }>;
    nodeInfo: {
      kubeletVersion: string;
      containerRuntimeVersion: string;
      operatingSystem: string;
      architecture: string;
      kernelVersion: string;
      osImage: string;
      /** The host's /etc/machine-id. */
      machineID?: string;
      /** The host's DMI product UUID, when readable. */
      systemUUID?: string;
      /** The host's boot id: changes on every reboot. */
      bootID?: string;
    };
    conditions?: Array<{
      type: string;
      status: 'True' | 'False' | 'Unknown';
      reason?: string;
      message?: string;
      lastHeartbeatTime?: string;
      lastTransitionTime?: string;
    }>;
  };
}

/** A node (re)registered. Writer: that node's agent, on `nodes.<node>.registration`. */
export class NodeRegisteredEvent {
  @IsString()
  @MinLength(1)
  nodeName: string;

  /** The node as its agent sees it: labels, capacity, allocatable, addresses, nodeInfo. */
  @ValidateBy({
    name: 'isNodeObject',
    validator: {
      validate: isNodeObject,
      defaultMessage: () =>
        'node must be a Node: metadata.name and labels, spec (taints with key and effect), status.capacity, allocatable, addresses and nodeInfo',
    },
  })
  node: NodeObject;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isStringMap = (v: unknown): boolean => isObject(v) && Object.values(v).every((x) => typeof x === 'string');

function isTaint(v: unknown): boolean {
  return (
    isObject(v) &&
    typeof v.key === 'string' &&
    v.key.length > 0 &&
    (v.value === undefined || typeof v.value === 'string') &&
    (TAINT_EFFECTS as readonly unknown[]).includes(v.effect)
  );
}

/** What every reader of a node relies on. */
function isNodeObject(v: unknown): boolean {
  if (!isObject(v) || !isObject(v.metadata) || !isObject(v.spec) || !isObject(v.status)) return false;
  const { metadata, spec, status } = v;
  return (
    typeof metadata.name === 'string' &&
    (spec.taints === undefined || (Array.isArray(spec.taints) && spec.taints.every(isTaint))) &&
    isStringMap(metadata.labels) &&
    isStringMap(status.capacity) &&
    isStringMap(status.allocatable) &&
    Array.isArray(status.addresses) &&
    status.addresses.every((a) => isObject(a) && typeof a.type === 'string' && typeof a.address === 'string') &&
    isObject(status.nodeInfo) &&
    (status.conditions === undefined || Array.isArray(status.conditions))
  );
}
