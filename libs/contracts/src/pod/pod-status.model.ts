/**
 * Pod status in the Kubernetes core/v1 shape. Written only by the agent of the pod's node
 * (conditions PodScheduled aside, which the API derives from the scheduler's facts).
 */
export type PodPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown';

export interface PodCondition {
  type: 'PodScheduled' | 'Initialized' | 'ContainersReady' | 'Ready' | 'DisruptionTarget';
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}

export interface ContainerStateWaiting {
  reason?: string;
  message?: string;
}
export interface ContainerStateRunning {
  startedAt?: string;
}
export interface ContainerStateTerminated {
  exitCode: number;
  signal?: number;
  reason?: string;
  message?: string;
  startedAt?: string;
  finishedAt?: string;
  containerID?: string;
}
export interface ContainerState {
  waiting?: ContainerStateWaiting;
  running?: ContainerStateRunning;
  terminated?: ContainerStateTerminated;
}

export interface ContainerStatus {
  name: string;
  state: ContainerState;
  lastState: ContainerState;
  ready: boolean;
  restartCount: number;
  image: string;
  imageID: string;
  containerID?: string;
  started?: boolean;
}

/** Kubernetes' quality of service classes, from the containers' requests and limits. */
export type PodQOSClass = 'Guaranteed' | 'Burstable' | 'BestEffort';

export interface PodStatus {
  phase: PodPhase;
  conditions?: PodCondition[];
  message?: string;
  reason?: string;
  hostIP?: string;
  podIP?: string;
  podIPs?: Array<{ ip: string }>;
  startTime?: string;
  /** The init containers' statuses (sidecars included), in spec order. */
  initContainerStatuses?: ContainerStatus[];
  containerStatuses?: ContainerStatus[];
  /** The ephemeral containers' statuses, in spec order; never ready, never restarted. */
  ephemeralContainerStatuses?: ContainerStatus[];
  qosClass?: PodQOSClass;
}
