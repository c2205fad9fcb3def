import { Inject, Injectable, Logger } from '@nestjs/common';
import { BUS, ListWatch, type Bus, type Delivery, type Folded } from '#bus';
import { STREAMS, SUBJECTS, type AnyEnvelope } from '#contracts';
import type { PodRecord } from '#domain';
import { podRef } from '#observability';
import { BindWindow, CLEANUPS_IN_FLIGHT } from '../binder/bind-window.js';
import { SchedulerCache } from '../cache/scheduler-cache.service.js';
import { schedulerMessages } from '../messages/scheduler-messages.js';

/** The node work last sent for a pod: the generation assigned, or its removal. */
export type AssignmentState = { kind: 'assigned'; generation: number } | { kind: 'unassigned' };

/** What an assignment message says was last sent for its pod. */
export function foldAssignment(envelope: AnyEnvelope): Folded<AssignmentState> | undefined {
  if (envelope.type === 'PodAssigned') {
    return {
      key: envelope.data.pod.metadata.uid ?? envelope.correlationId,
      object: { kind: 'assigned', generation: envelope.data.pod.metadata.generation ?? 1 },
      exists: true,
    };
  }
  if (envelope.type === 'PodUnassigned') return { key: envelope.data.uid, object: { kind: 'unassigned' }, exists: true };
  return undefined;
}

/**
 * Node work: what each bound pod's node must run (`PodAssigned`, one per generation) or stop
 * (the `PodUnassigned` tombstone), on the node's own subject for that pod. It folds what it
 * sent from the stream and assumes each write at once, so a pass never sends the same twice.
 */
@Injectable()
export class AssignmentsService {
  private readonly logger = new Logger(AssignmentsService.name);
  /** The node work last sent for each pod, by uid: its own assignments, read back, and each write assumed at once. */
  readonly sent = new ListWatch<AssignmentState>({ fold: foldAssignment });

  constructor(
    @Inject(BUS) private readonly bus: Bus,
    private readonly cache: SchedulerCache,
  ) {}

  /** An assignment read back from the stream (AssignmentsController). */
  apply(e: AnyEnvelope, delivery: Delivery): void {
    this.sent.apply(e, delivery);
  }

  /** The node work a bound pod still needs: its generation assigned, or once deleted its removal; nothing once sent. */
  due(pod: PodRecord): 'assign' | 'unassign' | undefined {
    if (!pod.nodeName) return undefined;
    const sent = this.sent.get(pod.uid);
    if (pod.deletion) return sent?.kind !== 'unassigned' ? 'unassign' : undefined;
    return sent?.kind !== 'assigned' || sent.generation < (pod.manifest.metadata.generation ?? 1) ? 'assign' : undefined;
  }

  /** Sends `node` the pod to run (`PodAssigned`), under a fixed id per generation, and assumes it sent. */
  async assign(pod: PodRecord, node: string): Promise<void> {
    const message = schedulerMessages.podAssigned(pod, node);
    await this.bus.publish(message.subject, message.type, message.data, message.options);
    this.sent.assume(pod.uid, { kind: 'assigned', generation: pod.manifest.metadata.generation ?? 1 });
  }

  /** Tells `node` to let the deleted pod go (the `PodUnassigned` tombstone), and assumes it sent. */
  async unassign(pod: PodRecord, node: string): Promise<void> {
    const message = schedulerMessages.podUnassigned(pod, node);
    await this.bus.publish(message.subject, message.type, message.data, message.options);
    this.sent.assume(pod.uid, { kind: 'unassigned' });
    this.logger.log(`unassigned ${podRef(pod)} from ${node}`);
  }

  /**
   * Once a node has let a pod go, its assignment subject is purged: the tombstone did its
   * work, and an agent's rebuild keeps costing what the node runs now, not what it ever ran.
   */
  async purgeTombstones(): Promise<void> {
    const cleanups = new BindWindow(CLEANUPS_IN_FLIGHT);
    for (const [uid, node] of this.cache.purgeable) {
      await cleanups.run(
        async () => {
          await this.bus.purgeSubject(STREAMS.assign, SUBJECTS.assignment(node, uid));
          this.sent.forget(uid);
          this.cache.purgeable.delete(uid);
        },
        (error) => this.logger.warn(`assignment of ${uid} on ${node} not purged: ${(error as Error).message}`),
      );
    }
    await cleanups.drain();
  }
}
