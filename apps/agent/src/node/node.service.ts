import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { BUS, type Bus } from '#bus';
import { STREAMS, SUBJECTS, type NodeObject } from '#contracts';
import { parseQuantity } from '#domain/quantity';
import type { ContainerRuntime, RuntimeInfo } from '#runtime';
import { AGENT_CONFIG, RUNTIME } from '../agent.constants.js';
import type { AgentConfig } from '../agent.config.js';
import { DesiredStateService } from '../config/desired-state.service.js';
import { PlegHealth } from '../pleg/pleg-health.js';
import { EvictionManager } from '../eviction/eviction-manager.service.js';
import { allocatableFrom, parseNodeLabels, parseTaints, readyCondition } from './node-conditions.js';
import { readCgroupLimits } from './cgroup-limits.js';
import { describeNode, detectNodeIP, fileSystemBytes, sharedFor } from './node-info.js';

/** The machine's cgroup limits, shared by the nodes of one process (see sharedFor). */
const machineLimits = sharedFor(500, () => readCgroupLimits());

/** The size of each root dir's file system (ephemeral-storage capacity), shared likewise. */
const rootFileSystems = new Map<string, () => number | undefined>();
function rootFileSystemBytes(dir: string): number | undefined {
  let read = rootFileSystems.get(dir);
  if (!read) rootFileSystems.set(dir, (read = sharedFor(500, () => fileSystemBytes(dir))));
  return read();
}

const UNKNOWN_RUNTIME: RuntimeInfo = { name: 'docker', version: 'unknown', apiVersion: 'unknown', os: 'unknown', kernelVersion: 'unknown' };

export const AGENT_VERSION = '0.1.0';

const rfc3339 = (ms: number): string => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');

/** Registers this node and keeps its heartbeat going. */
@Injectable()
export class NodeService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(NodeService.name);
  private heartbeat?: NodeJS.Timeout;
  private runtimeInfo?: RuntimeInfo;
  private lastReport?: { atMs: number; conditions: string };
  private lastNode?: NodeObject;
  private readonly unknownReported = new Set<string>();
  /** The node's uid and creation time: from its last registration in the log, else new. */
  private identity: { uid: string; creationTimestamp: string } = { uid: randomUUID(), creationTimestamp: rfc3339(Date.now()) };
  /** Each condition's status and since when, for lastTransitionTime. */
  private readonly transitions = new Map<string, { status: string; since: string }>();
  /** Whether the runtime was down at the last look, and since when that holds. */
  private runtimeDown = false;
  readonly nodeIP: string;

  constructor(
    @Inject(AGENT_CONFIG) private readonly config: AgentConfig,
    @Inject(BUS) private readonly bus: Bus,
    @Inject(RUNTIME) private readonly runtime: ContainerRuntime,
    private readonly desired: DesiredStateService,
    private readonly pleg: PlegHealth,
    private readonly eviction: EvictionManager,
  ) {
    this.nodeIP = config.NODE_IP ?? detectNodeIP();
  }

  async onApplicationBootstrap(): Promise<void> {
    const name = this.config.NODE_NAME;
    // The engine and the bus answer independently: one round trip's wait, not two.
    [this.runtimeInfo, this.identity] = await Promise.all([this.runtime.info(), this.previousIdentity()]);
    const node = await this.report();
    this.logger.log(`registered node ${name} (${this.nodeIP}, ${node.status.capacity.cpu} CPU, ${node.status.capacity.memory} memory)`);
    // The heartbeat counts the node's pods: once its assignments are read.
    await this.desired.caughtUp;
    await this.beat();
    this.heartbeat = setInterval(() => void this.beat(), this.config.HEARTBEAT_SECONDS * 1000);
  }

  /**
   * A node keeps its uid and creation time across agent restarts, as a Kubernetes Node
   * object outlives its kubelet: the log's last registration of this node holds them.
   */
  private async previousIdentity(): Promise<{ uid: string; creationTimestamp: string }> {
    try {
      const last = await this.bus.lastMessage(STREAMS.nodes, SUBJECTS.nodeRegistration(this.config.NODE_NAME));
      const metadata = last?.envelope.type === 'NodeRegistered' ? last.envelope.data.node.metadata : undefined;
      if (metadata?.uid && metadata.creationTimestamp) return { uid: metadata.uid, creationTimestamp: metadata.creationTimestamp };
    } catch (error) {
      this.logger.warn(`could not read the node's last registration, registering as new: ${(error as Error).message}`);
    }
    return this.identity;
  }

  /** Stamps each condition with when its status last changed (the kubelet's lastTransitionTime) and this reading's time. */
  private stamp(conditions: NonNullable<NodeObject['status']['conditions']>): NodeObject['status']['conditions'] {
    const now = rfc3339(Date.now());
    return conditions.map((c) => {
      const previous = this.transitions.get(c.type);
      const since = previous?.status === c.status ? previous.since : now;
      this.transitions.set(c.type, { status: c.status, since });
      return { ...c, lastHeartbeatTime: now, lastTransitionTime: since };
    });
  }

  /** The node as the machine describes it, before labels, taints, reservations and conditions. */
  private machineNode(): NodeObject {
    const storage = rootFileSystemBytes(this.config.AGENT_ROOT_DIR);
    return describeNode(this.config.NODE_NAME, this.nodeIP, this.config.MAX_PODS, this.runtimeInfo ?? UNKNOWN_RUNTIME, AGENT_VERSION, machineLimits(), storage);
  }

  /** What pods may use: capacity less the system's reservation (a downward API resourceFieldRef to an unset limit reads it). */
  allocatable(): Record<string, string> {
    const node = this.machineNode();
    return allocatableFrom(node.status.capacity, this.config.SYSTEM_RESERVED, parseQuantity);
  }

  /** The node as it is now: capacity, labels, taints, and the eviction manager's pressure conditions. */
  private describe(): NodeObject {
    const node = this.machineNode();
    // The pressure conditions' taints, as the node lifecycle controller adds them (TaintNodesByCondition).
    const taints = [...parseTaints(this.config.REGISTER_WITH_TAINTS), ...this.eviction.taints()];
    return {
      ...node,
      metadata: { ...node.metadata, ...this.identity, labels: { ...parseNodeLabels(this.config.NODE_LABELS), ...node.metadata.labels } },
      spec: { ...node.spec, ...(taints.length ? { taints } : {}) },
      status: {
        ...node.status,
        allocatable: allocatableFrom(node.status.capacity, this.config.SYSTEM_RESERVED, parseQuantity),
        conditions: this.stamp([...this.eviction.conditions(), this.ready()]),
      },
    };
  }

  /** Ready=False while the container runtime is down; a change goes out with the next heartbeat. */
  private ready(): ReturnType<typeof readyCondition> {
    const down = this.config.RUNTIME === 'fake' ? undefined : this.pleg.runtimeDown();
    if ((down !== undefined) !== this.runtimeDown) {
      this.runtimeDown = down !== undefined;
      if (down !== undefined) this.logger.warn(`node ${this.config.NODE_NAME} is NotReady: container runtime is down: ${down}`);
      else this.logger.log(`node ${this.config.NODE_NAME} is Ready: the container runtime is back`);
    }
    return readyCondition(down);
  }

  /** Publishes the full node status; says once why a condition cannot be determined. */
  private async report(): Promise<NodeObject> {
    const name = this.config.NODE_NAME;
    const node = this.describe();
    this.lastNode = node;
    await this.bus.publish(SUBJECTS.nodeRegistration(name), 'NodeRegistered', { nodeName: name, node }, { correlationId: name });
    this.lastReport = { atMs: Date.now(), conditions: JSON.stringify(node.status.conditions?.map((c) => [c.type, c.status])) };
    for (const c of node.status.conditions ?? []) {
      if (c.status !== 'Unknown' || this.unknownReported.has(c.type)) continue;
      this.unknownReported.add(c.type);
      this.logger.warn(`${c.type} ${c.message ?? ''}`);
      this.bus.publishBuffered(
        SUBJECTS.nodeEvents(name),
        'NodeEvent',
        {
          nodeName: name,
          eventType: 'Warning',
          reason: 'NodeConditionUnknown',
          message: `${c.type} ${c.message ?? ''}`,
          observedAt: new Date().toISOString(),
        },
        { correlationId: name },
      );
    }
    return node;
  }

  /** The node as last reported (capacity, labels, taints), or as it is now before the first report. */
  current(): NodeObject {
    return this.lastNode ?? this.describe();
  }

  onModuleDestroy(): void {
    clearInterval(this.heartbeat);
  }

  private async beat(): Promise<void> {
    const name = this.config.NODE_NAME;
    try {
      // The full status goes out when a condition moved, and at least every NODE_STATUS_REPORT_SECONDS.
      const conditions = JSON.stringify(this.describe().status.conditions?.map((c) => [c.type, c.status]));
      const due = Date.now() - (this.lastReport?.atMs ?? 0) >= this.config.NODE_STATUS_REPORT_SECONDS * 1000;
      if (due || conditions !== this.lastReport?.conditions) await this.report();
      await this.bus.publish(
        SUBJECTS.nodeHeartbeat(name),
        'NodeHeartbeat',
        { nodeName: name, renewTime: new Date().toISOString(), runningPods: this.desired.runningCount() },
        { correlationId: name },
      );
    } catch (error) {
      this.logger.warn(`heartbeat failed: ${(error as Error).message}`);
    }
  }
}
