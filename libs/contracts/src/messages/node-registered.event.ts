import { IsString, MinLength, ValidateBy } from 'class-validator';

/** Kubernetes core/v1 Node, the subset jetlet reports. */
export interface NodeObject {
  metadata: { name: string; labels: Record<string, string>; uid?: string; creationTimestamp?: string; resourceVersion?: string };
  spec: { unschedulable?: boolean };
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
      defaultMessage: () => 'node must be a Node: metadata.name and labels, spec, status.capacity, allocatable, addresses and nodeInfo',
    },
  })
  node: NodeObject;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isStringMap = (v: unknown): boolean => isObject(v) && Object.values(v).every((x) => typeof x === 'string');

/** What every reader of a node relies on. */
function isNodeObject(v: unknown): boolean {
  if (!isObject(v) || !isObject(v.metadata) || !isObject(v.spec) || !isObject(v.status)) return false;
  const { metadata, status } = v;
  return (
    typeof metadata.name === 'string' &&
    isStringMap(metadata.labels) &&
    isStringMap(status.capacity) &&
    isStringMap(status.allocatable) &&
    Array.isArray(status.addresses) &&
    status.addresses.every((a) => isObject(a) && typeof a.type === 'string' && typeof a.address === 'string') &&
    isObject(status.nodeInfo) &&
    (status.conditions === undefined || Array.isArray(status.conditions))
  );
}
