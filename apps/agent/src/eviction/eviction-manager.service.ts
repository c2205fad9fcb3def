import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { BUS, type Bus } from '#bus';
import { STREAMS, SUBJECTS } from '#contracts';
import {
  evictionMessage,
  EvictionTracker,
  parseThresholds,
  PRESSURE_TAINTS,
  rankForEviction,
  SIGNAL_RESOURCE,
  type EvictionCandidate,
  type EvictionDecision,
  type PressureCondition,
} from '#domain/eviction';
import { localStorageViolation } from '#domain/local-storage-eviction';
import { parseQuantity } from '#domain/quantity';
import type { DesiredPod } from '#domain/reconcile';
import { podRef } from '#observability';
import type { RuntimeContainer } from '#runtime';
import { AGENT_CONFIG } from '../agent.constants.js';
import type { AgentConfig } from '../agent.config.js';
import { DesiredStateService } from '../config/desired-state.service.js';
import { EventRecorder } from '../events/event-recorder.service.js';
import { sharedFor } from '../node/node-info.js';
import { observationsOf, pressureConditions, takeReadings, type SignalReadings } from '../node/node-conditions.js';
import { ImageGcManager } from '../images/image-gc-manager.service.js';
import { StatsCollector } from '../stats/stats-collector.service.js';
import { StatusReporter } from '../status/status-reporter.service.js';
import { EVICTION_SIGNAL_READER, EVICTION_STORAGE_READER, type PodStorageReader, type SignalReader } from './eviction.constants.js';

/** Readings shared by the nodes of one process (hollow nodes), per pair of directories. */
const machineReadings = new Map<string, () => SignalReadings>();

/** Reads the machine (statfs, /proc, the cgroup), as the kubelet's summary provider does. */
export class MachineSignalReader implements SignalReader {
  constructor(
    private readonly rootDir: string,
    private readonly imagefsDir: string,
  ) {}

  read(): SignalReadings {
    let read = machineReadings.get(`${this.rootDir}\0${this.imagefsDir}`);
    if (!read) machineReadings.set(`${this.rootDir}\0${this.imagefsDir}`, (read = sharedFor(500, () => takeReadings(this.rootDir, this.imagefsDir))));
    return read();
  }
}

/** The signals image garbage collection can relieve. */
const DISK_SIGNALS = new Set(['nodefs.available', 'nodefs.inodesFree', 'imagefs.available']);

/** A static pod is critical to the kubelet and never evicted. */
const isStatic = (pod: DesiredPod): boolean => {
  const source = pod.manifest.metadata.annotations?.['kubernetes.io/config.source'];
  return source !== undefined && source !== 'api';
};

/**
 * The kubelet's eviction manager: every EVICTION_MONITORING_INTERVAL_SECONDS it reads the
 * eviction signals, holds the node's pressure conditions (and with them its taints), and while
 * a threshold is crossed past its grace period evicts one pod — the first in the kubelet's
 * order — which then ends Failed with reason Evicted. Before the thresholds, on every look, it
 * evicts at once each pod over a local-storage limit (an emptyDir's `sizeLimit`, the pod's or a
 * container's `ephemeral-storage` limit), as the kubelet's localStorageEviction does, and then
 * evicts nothing else that look. For a disk threshold, unused images are removed first (when
 * image garbage collection is on), and no pod goes if that was enough.
 */
@Injectable()
export class EvictionManager implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(EvictionManager.name);
  private readonly tracker: EvictionTracker;
  private readonly evicted = new Map<string, { message: string; graceSeconds: number }>();
  private readings: SignalReadings;
  private decision: EvictionDecision = { pressure: new Set() };
  private timer?: NodeJS.Timeout;
  private onEvict: () => void = () => undefined;
  /** Until the first pass is through, an earlier process of this agent may have evicted a pod. */
  private restoring = true;
  private checking?: Promise<void>;

  constructor(
    @Inject(AGENT_CONFIG) private readonly config: AgentConfig,
    @Inject(BUS) private readonly bus: Bus,
    @Inject(EVICTION_SIGNAL_READER) private readonly reader: SignalReader,
    @Inject(EVICTION_STORAGE_READER) private readonly storage: PodStorageReader,
    private readonly desired: DesiredStateService,
    private readonly status: StatusReporter,
    private readonly events: EventRecorder,
    private readonly stats: StatsCollector,
    private readonly images: ImageGcManager,
  ) {
    const thresholds = [...parseThresholds(config.EVICTION_HARD, true), ...parseThresholds(config.EVICTION_SOFT, false, config.EVICTION_SOFT_GRACE_PERIOD)];
    this.tracker = new EvictionTracker(thresholds, config.EVICTION_PRESSURE_TRANSITION_PERIOD_SECONDS * 1000);
    this.readings = reader.read();
    this.decision = this.tracker.observe(observationsOf(this.readings), Date.now());
  }

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.check(), this.config.EVICTION_MONITORING_INTERVAL_SECONDS * 1000);
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
  }

  /** Where to ask for a reconcile pass once a pod is evicted. */
  onEviction(listener: () => void): void {
    this.onEvict = listener;
  }

  /** The node's pressure conditions, from the last look. */
  conditions(): ReturnType<typeof pressureConditions> {
    return pressureConditions(this.decision.pressure, this.readings);
  }

  /** The taints of the pressure conditions that hold (TaintNodesByCondition). */
  taints(): Array<{ key: string; effect: 'NoSchedule' }> {
    return [...this.decision.pressure].sort().map((c: PressureCondition) => ({ key: PRESSURE_TAINTS[c], effect: 'NoSchedule' as const }));
  }

  /** Why the pod was evicted, if it was. */
  evictionOf(uid: string): { message: string; graceSeconds: number } | undefined {
    return this.evicted.get(uid);
  }

  /** Marks the desired pods this node evicted, so the planner stops them for good; after a restart, from their last status. */
  async mark(desired: DesiredPod[], observed: Map<string, RuntimeContainer[]>): Promise<DesiredPod[]> {
    if (this.restoring) {
      this.restoring = false;
      // An evicted pod has nothing running: only those are looked up.
      const quiet = desired.filter((p) => !p.terminating && !(observed.get(p.uid) ?? []).some((c) => c.state === 'running'));
      await Promise.all(quiet.map((p) => this.restore(p)));
    }
    return desired.map((p) => {
      const eviction = this.evicted.get(p.uid);
      return eviction && !p.terminating ? { ...p, evicted: { graceSeconds: eviction.graceSeconds } } : p;
    });
  }

  forget(uid: string): void {
    this.evicted.delete(uid);
  }

  /** One look: read, decide the conditions, and evict one pod while a threshold is due. Never two at once. */
  check(): Promise<void> {
    this.checking ??= this.look().finally(() => (this.checking = undefined));
    return this.checking;
  }

  private async look(): Promise<void> {
    this.readings = this.reader.read();
    this.decision = this.tracker.observe(observationsOf(this.readings), Date.now());
    const active = this.desired.list().filter((p) => !p.terminating && !this.evicted.has(p.uid) && !isStatic(p) && !this.finished(p.uid));
    if (active.length === 0) return;
    if (await this.localStorageEviction(active)) return;
    let reclaim = this.decision.reclaim;
    if (!reclaim) return;
    if (DISK_SIGNALS.has(reclaim.threshold.signal) && this.images.enabled) {
      // The kubelet reclaims node-level resources first: unused images go, and if that is
      // enough, no pod is evicted.
      const freed = await this.images.deleteUnusedImages().catch((error: Error) => {
        this.logger.warn(`removing unused images before evicting failed: ${error.message}`);
        return { removed: [], freedBytes: 0 };
      });
      if (freed.removed.length > 0) {
        this.readings = this.reader.read();
        this.decision = this.tracker.observe(observationsOf(this.readings), Date.now());
        reclaim = this.decision.reclaim;
        if (!reclaim) return;
      }
    }
    const { threshold, observation } = reclaim;
    const usage = threshold.signal === 'memory.available' ? await this.memoryUsage() : new Map<string, Array<{ name: string; usage: number }>>();
    const candidates: EvictionCandidate[] = active.map((p) => {
      const containers = usage.get(p.uid);
      return {
        uid: p.uid,
        spec: p.manifest.spec,
        ...(containers ? { usage: containers.reduce((sum, c) => sum + c.usage, 0), containers } : {}),
      };
    });
    const [victim] = rankForEviction(candidates, threshold.signal, parseQuantity);
    const pod = active.find((p) => p.uid === victim?.uid);
    if (!victim || !pod) return;
    const message = evictionMessage(threshold, observation, victim, parseQuantity);
    const podGrace = pod.manifest.spec.terminationGracePeriodSeconds ?? 30;
    const max = this.config.EVICTION_MAX_POD_GRACE_PERIOD_SECONDS;
    // A hard threshold kills at once; a soft one gives the pod its grace, at most the configured maximum.
    const graceSeconds = threshold.hard ? 0 : max > 0 ? Math.min(max, podGrace) : podGrace;
    this.evict(pod, message, graceSeconds);
    this.bus.publishBuffered(
      SUBJECTS.nodeEvents(this.config.NODE_NAME),
      'NodeEvent',
      {
        nodeName: this.config.NODE_NAME,
        eventType: 'Warning',
        reason: 'EvictionThresholdMet',
        message: `Attempting to reclaim ${SIGNAL_RESOURCE[threshold.signal]}`,
        observedAt: new Date().toISOString(),
      },
      { correlationId: this.config.NODE_NAME },
    );
    this.onEvict();
  }

  private evict(pod: DesiredPod, message: string, graceSeconds: number): void {
    this.evicted.set(pod.uid, { message, graceSeconds });
    this.logger.warn(`evicting ${podRef(pod)}: ${message}`);
    this.events.warning(pod, 'Evicted', message);
  }

  /** The kubelet's localStorageEviction: every pod over a local-storage limit goes, with no grace. True when one did. */
  private async localStorageEviction(active: DesiredPod[]): Promise<boolean> {
    let usage;
    try {
      usage = await this.storage.read(active);
    } catch (error) {
      this.logger.warn(`measuring pods' local storage failed: ${(error as Error).message}`);
      return false;
    }
    let evicted = false;
    for (const pod of active) {
      const measured = usage.get(pod.uid);
      const violation = measured && localStorageViolation(pod.manifest.spec, measured);
      if (!violation) continue;
      this.evict(pod, violation.message, 0);
      evicted = true;
    }
    if (evicted) this.onEvict();
    return evicted;
  }

  private finished(uid: string): boolean {
    const phase = this.status.previous(uid)?.phase;
    return phase === 'Succeeded' || phase === 'Failed';
  }

  /** Working set per container of each pod, from the stats provider's last sample. */
  private async memoryUsage(): Promise<Map<string, Array<{ name: string; usage: number }>>> {
    const summary = await this.stats.summary().catch(() => undefined);
    return new Map((summary?.pods ?? []).map((p) => [p.podRef.uid, p.containers.map((c) => ({ name: c.name, usage: c.memory.workingSetBytes }))]));
  }

  /** An eviction an earlier process of this agent reported: the pod's last status says Failed/Evicted. */
  private async restore(pod: DesiredPod): Promise<void> {
    const last = await this.bus.lastMessage(STREAMS.pods, SUBJECTS.podStatus(this.config.NODE_NAME, pod.uid)).catch(() => undefined);
    if (last?.envelope.type !== 'PodStatusReported' || last.envelope.data.removed) return;
    const { phase, reason, message } = last.envelope.data.status;
    if (phase === 'Failed' && reason === 'Evicted') this.evicted.set(pod.uid, { message: message ?? '', graceSeconds: 0 });
  }
}
