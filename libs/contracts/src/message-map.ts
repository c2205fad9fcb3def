import type { ClassConstructor } from 'class-transformer';
import { BackoffRecordedEvent } from './messages/backoff-recorded.event.js';
import { ConfigMapDeletedEvent, ConfigMapWrittenEvent, SecretDeletedEvent, SecretWrittenEvent } from './messages/config.events.js';
import { ContainerEventEvent } from './messages/container-event.event.js';
import { ImagePullProgressEvent } from './messages/image-pull-progress.event.js';
import { LeaseRenewedEvent } from './messages/lease-renewed.event.js';
import { NodeHeartbeatEvent } from './messages/node-heartbeat.event.js';
import { NodeRegisteredEvent } from './messages/node-registered.event.js';
import { NamespaceCreatedEvent, NamespaceDeletionRequestedEvent, NamespaceRemovedEvent } from './messages/namespace.events.js';
import { MirrorPodUpdatedEvent } from './messages/mirror-pod-updated.event.js';
import { NodeEventEvent } from './messages/node-event.event.js';
import { NodeSpecChangedEvent } from './messages/node-spec-changed.event.js';
import { PodAssignedEvent } from './messages/pod-assigned.event.js';
import { PodCreatedEvent } from './messages/pod-created.event.js';
import { PodDeletionFinalizedEvent } from './messages/pod-deletion-finalized.event.js';
import { PodDeletionRequestedEvent } from './messages/pod-deletion-requested.event.js';
import { PodEvictedEvent } from './messages/pod-evicted.event.js';
import { PodEventEvent } from './messages/pod-event.event.js';
import { PodScheduledEvent } from './messages/pod-scheduled.event.js';
import { PodUnschedulableEvent } from './messages/pod-unschedulable.event.js';
import { PodStatusReportedEvent } from './messages/pod-status-reported.event.js';
import { PodUnassignedEvent } from './messages/pod-unassigned.event.js';
import { PodUpdatedEvent } from './messages/pod-updated.event.js';
import { ProbeResultChangedEvent } from './messages/probe-result-changed.event.js';
import { RequestAuditedEvent } from './messages/request-audited.event.js';

/** Every message type, its current version and its payload class. */
export const MESSAGES = {
  PodCreated: { version: 1, data: PodCreatedEvent },
  PodScheduled: { version: 1, data: PodScheduledEvent },
  PodUnschedulable: { version: 1, data: PodUnschedulableEvent },
  PodUpdated: { version: 1, data: PodUpdatedEvent },
  PodDeletionRequested: { version: 2, data: PodDeletionRequestedEvent },
  PodEvicted: { version: 1, data: PodEvictedEvent },
  PodDeletionFinalized: { version: 1, data: PodDeletionFinalizedEvent },
  PodAssigned: { version: 1, data: PodAssignedEvent },
  PodUnassigned: { version: 1, data: PodUnassignedEvent },
  PodStatusReported: { version: 1, data: PodStatusReportedEvent },
  ContainerEvent: { version: 1, data: ContainerEventEvent },
  PodEvent: { version: 2, data: PodEventEvent },
  NodeRegistered: { version: 1, data: NodeRegisteredEvent },
  NodeHeartbeat: { version: 1, data: NodeHeartbeatEvent },
  NodeEvent: { version: 1, data: NodeEventEvent },
  NodeSpecChanged: { version: 1, data: NodeSpecChangedEvent },
  MirrorPodUpdated: { version: 1, data: MirrorPodUpdatedEvent },
  BackoffRecorded: { version: 1, data: BackoffRecordedEvent },
  ProbeResultChanged: { version: 1, data: ProbeResultChangedEvent },
  ImagePullProgress: { version: 1, data: ImagePullProgressEvent },
  NamespaceCreated: { version: 1, data: NamespaceCreatedEvent },
  NamespaceDeletionRequested: { version: 1, data: NamespaceDeletionRequestedEvent },
  NamespaceRemoved: { version: 1, data: NamespaceRemovedEvent },
  ConfigMapWritten: { version: 1, data: ConfigMapWrittenEvent },
  ConfigMapDeleted: { version: 1, data: ConfigMapDeletedEvent },
  SecretWritten: { version: 1, data: SecretWrittenEvent },
  SecretDeleted: { version: 1, data: SecretDeletedEvent },
  RequestAudited: { version: 1, data: RequestAuditedEvent },
  LeaseRenewed: { version: 1, data: LeaseRenewedEvent },
} as const satisfies Record<string, { version: number; data: ClassConstructor<object> }>;

export type MessageType = keyof typeof MESSAGES;

/** The payload of message type T. */
export type MessageData<T extends MessageType> = InstanceType<(typeof MESSAGES)[T]['data']>;

/**
 * Payload classes by (type, version). Old versions stay here, marked @deprecated in their
 * class, until no stream holds them.
 */
export const MESSAGE_VERSIONS: Record<string, ClassConstructor<object>> = {
  ...Object.fromEntries(Object.entries(MESSAGES).map(([type, m]) => [`${type}/v${m.version}`, m.data])),
  // v1 is v2 without a series (a one-off event); v2's class reads it, its new fields being optional.
  'PodEvent/v1': PodEventEvent,
  // v1 is v2 without `disruption` (a plain deletion).
  'PodDeletionRequested/v1': PodDeletionRequestedEvent,
};
