import { Inject, Injectable, Logger } from '@nestjs/common';
import { BUS, JetStreamServer, type Bus, type Delivery } from '#bus';
import { ContractValidationError, STREAMS, SUBJECTS, type AnyEnvelope, type PodManifest } from '#contracts';
import { assignmentCauses } from '#domain/assignment-check';
import { checkPodSecurity, enforcedLevel, podSecurityMessage } from '#domain/pod-security';
import type { DesiredPod } from '#domain/reconcile';
import { podRef } from '#observability';
import { AGENT_CONFIG } from '../agent.constants.js';
import type { AgentConfig } from '../agent.config.js';
import { EventRecorder } from '../events/event-recorder.service.js';
import { PodStartTracker } from '../status/pod-start-tracker.js';
import { ASSIGNMENTS } from './desired.constants.js';

type Listener = () => void;

type NamespaceRecord = ReturnType<Bus['lastMessage']>;

/** The most assignments of one run that share a namespace's read (see `namespaceRecord`). */
const RUN_READS = 256;

/**
 * What this node must run, rebuilt from its assignments at every start (AssignmentsController
 * feeds it; its consumer is recreated with last-per-subject delivery, so the cost grows with
 * this node's pods, not with the stream's history) and from the static pod sources.
 */
@Injectable()
export class DesiredStateService {
  private readonly logger = new Logger(DesiredStateService.name);
  private readonly pods = new Map<string, DesiredPod>();
  private readonly staticPods = new Map<string, DesiredPod>();
  /** The newest stream sequence applied per assignment subject (kept after a pod is forgotten). */
  private readonly applied = new Map<string, number>();
  private readonly listeners = new Set<Listener>();
  /** Each namespace's record as read for the run of assignments being delivered back to back. */
  private readonly runNamespaces = new Map<string, NamespaceRecord>();
  private runReads = 0;

  constructor(
    @Inject(AGENT_CONFIG) private readonly config: AgentConfig,
    private readonly transport: JetStreamServer,
    @Inject(BUS) private readonly bus: Bus,
    private readonly starts: PodStartTracker,
    private readonly events: EventRecorder,
  ) {}

  /** One message from this node's assignments. Throws ContractValidationError for one that fails the API's own checks. */
  async receive(envelope: AnyEnvelope, delivery: Delivery): Promise<void> {
    // A redelivered or late message must not undo a newer one: an old PodAssigned after
    // its tombstone would bring a deleted pod back.
    if ((this.applied.get(delivery.subject) ?? 0) >= delivery.seq) return;
    // Checked as strictly as the API checks a client: the transport terminates what fails.
    const causes = assignmentCauses(this.config.NODE_NAME, delivery.subject, envelope);
    if (causes.length > 0) throw new ContractValidationError(envelope.type, causes);
    if (envelope.type === 'PodAssigned' && !(await this.admitPodSecurity(envelope.data.pod, delivery.pending))) {
      this.applied.set(delivery.subject, delivery.seq);
      return;
    }
    this.applied.set(delivery.subject, delivery.seq);
    this.apply(envelope);
  }

  /**
   * Pod Security admission again on the node, so that a forged or buggy assignment cannot
   * run what the API would have refused: the level comes from the pod's namespace as the API
   * last recorded it on the bus (its single writer), else POD_SECURITY_DEFAULT. A pod that
   * breaks it is not run, and a Warning `FailedPodSecurity` event says why.
   */
  private async admitPodSecurity(pod: PodManifest, pending: number): Promise<boolean> {
    const namespace = pod.metadata.namespace ?? 'default';
    // A failed read (the bus is away) fails the handler: the assignment is delivered again.
    const last = await this.namespaceRecord(namespace, pending);
    const labels = last?.envelope.type === 'NamespaceCreated' ? last.envelope.data.labels : undefined;
    const level = enforcedLevel(labels, this.config.POD_SECURITY_DEFAULT) ?? 'restricted';
    const violations = checkPodSecurity(level, pod.spec);
    if (violations.length === 0) return true;
    const ref = { namespace, name: pod.metadata.name, uid: pod.metadata.uid ?? '' };
    const message = `pods "${ref.name}" is forbidden: ${podSecurityMessage(level, violations)}`;
    this.logger.warn(`refused ${podRef(ref)}: ${message}`);
    this.events.warning(ref, 'FailedPodSecurity', message);
    return false;
  }

  /**
   * The namespace's last record on the bus. Assignments delivered back to back (`pending`
   * after each: at start, the node's whole rebuild) share one read of each namespace, as if
   * all were admitted at the moment the first was, up to RUN_READS of them; one delivered on
   * its own, and the first after a run, reads it afresh. A rebuild of 110 pods made 110
   * round trips, one after another, before the node could start any of them.
   */
  private namespaceRecord(namespace: string, pending: number): NamespaceRecord {
    if (this.runReads++ >= RUN_READS) this.endRun();
    let record = this.runNamespaces.get(namespace);
    if (!record) {
      const read = this.bus.lastMessage(STREAMS.pods, SUBJECTS.namespace(namespace));
      this.runNamespaces.set(namespace, read);
      // A failed read is not shared: the next assignment asks again.
      read.catch(() => this.runNamespaces.get(namespace) === read && this.runNamespaces.delete(namespace));
      record = read;
    }
    if (pending === 0) this.endRun();
    return record;
  }

  private endRun(): void {
    this.runNamespaces.clear();
    this.runReads = 0;
  }

  /** Resolves once every assignment that existed at start has been applied. */
  get caughtUp(): Promise<void> {
    return this.transport.caughtUp(ASSIGNMENTS);
  }

  onChange(listener: Listener): void {
    this.listeners.add(listener);
  }

  list(): DesiredPod[] {
    return [...this.pods.values(), ...this.staticPods.values()];
  }

  /**
   * Replaces the static pods (from manifest files or a URL). One that is no longer there
   * turns terminating with its own grace, like a deleted pod, until its removal is reported.
   */
  setStatic(pods: DesiredPod[]): void {
    const next = new Map(pods.map((p) => [p.uid, p]));
    let changed = false;
    for (const [uid, pod] of this.staticPods) {
      if (next.has(uid) || pod.terminating) continue;
      this.staticPods.set(uid, { ...pod, terminating: { graceSeconds: pod.manifest.spec.terminationGracePeriodSeconds ?? 30 } });
      changed = true;
    }
    for (const [uid, pod] of next) {
      if (this.staticPods.has(uid) && !this.staticPods.get(uid)?.terminating) continue;
      this.staticPods.set(uid, pod);
      this.starts.seen(uid);
      changed = true;
    }
    if (changed) for (const listener of this.listeners) listener();
  }

  runningCount(): number {
    return this.list().filter((p) => !p.terminating).length;
  }

  private apply(envelope: AnyEnvelope): void {
    switch (envelope.type) {
      case 'PodAssigned': {
        const { metadata } = envelope.data.pod;
        if (envelope.data.pod.spec.nodeName !== this.config.NODE_NAME) {
          this.logger.warn(`ignoring assignment of ${metadata.name} for node ${envelope.data.pod.spec.nodeName ?? '(none)'}`);
          return;
        }
        const pod: DesiredPod = {
          namespace: metadata.namespace ?? 'default',
          name: metadata.name,
          uid: metadata.uid ?? '',
          manifest: envelope.data.pod,
        };
        this.pods.set(pod.uid, pod);
        this.starts.seen(pod.uid);
        this.logger.log(`assigned ${podRef(pod)}`);
        break;
      }
      case 'PodUnassigned': {
        const { uid, namespace, name, gracePeriodSeconds } = envelope.data;
        const existing = this.pods.get(uid);
        this.pods.set(uid, {
          namespace,
          name,
          uid,
          manifest: existing?.manifest ?? { metadata: { name, namespace, uid }, spec: { containers: [] } },
          terminating: { graceSeconds: gracePeriodSeconds },
        });
        this.logger.log(`unassigned ${podRef({ namespace, name, uid })} (grace ${gracePeriodSeconds}s)`);
        break;
      }
      default:
        this.logger.warn(`unexpected ${envelope.type} on this node's assignments`);
        return;
    }
    for (const listener of this.listeners) listener();
  }

  /** Forgets a tombstoned pod once its removal is reported. */
  forget(uid: string): void {
    if (this.pods.get(uid)?.terminating) this.pods.delete(uid);
    if (this.staticPods.get(uid)?.terminating) this.staticPods.delete(uid);
  }
}
