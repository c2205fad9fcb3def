import { IsObject, IsString, MinLength } from 'class-validator';

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
  @IsObject()
  node: NodeObject;
}
