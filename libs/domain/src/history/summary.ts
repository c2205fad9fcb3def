import type { AnyEnvelope, ContainerStatus, ImagePullProgressEvent } from '#contracts';
import { goDuration } from '../backoff.js';

const MIB = 1024 * 1024;

/** A pull's progress in one line: a bar when its size is known, then bytes and layers. */
export function pullProgressText(p: Pick<ImagePullProgressEvent, 'image' | 'layers' | 'layersDone' | 'currentBytes' | 'totalBytes'>, width = 20): string {
  const layers = `${p.layersDone}/${p.layers} layers`;
  if (p.totalBytes <= 0) return `${p.image} ${layers}`;
  const ratio = Math.min(1, p.currentBytes / p.totalBytes);
  const filled = Math.round(ratio * width);
  const bar = `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}]`;
  return `${p.image} ${bar} ${Math.floor(ratio * 100)}% ${(p.currentBytes / MIB).toFixed(1)}/${(p.totalBytes / MIB).toFixed(1)} MiB, ${layers}`;
}

function containerState(s: ContainerStatus): string {
  const state = s.state.running
    ? 'running'
    : s.state.waiting
      ? (s.state.waiting.reason ?? 'waiting')
      : s.state.terminated
        ? `terminated ${s.state.terminated.reason ?? ''} exit ${s.state.terminated.exitCode}`.replace('  ', ' ')
        : 'unknown';
  return `${s.name} ${state}${s.ready ? ' ready' : ''}${s.restartCount > 0 ? ` restarts ${s.restartCount}` : ''}`;
}

/** One line saying what a message means, for timelines. */
export function summarize(envelope: AnyEnvelope): string {
  switch (envelope.type) {
    case 'NamespaceCreated':
      return `namespace ${envelope.data.name} created`;
    case 'NamespaceDeletionRequested':
      return 'namespace deletion requested: terminating';
    case 'NamespaceRemoved':
      return 'namespace removed';
    case 'ConfigMapWritten':
      return `configmap ${envelope.data.namespace}/${envelope.data.name} written: ${Object.keys({ ...envelope.data.data, ...envelope.data.binaryData }).length} keys`;
    case 'ConfigMapDeleted':
      return 'configmap deleted';
    case 'SecretWritten':
      // Never a value, sealed or not: only that the secret changed.
      return `secret ${envelope.data.namespace}/${envelope.data.name} written (${envelope.data.type}${envelope.data.sealed ? ', sealed' : ''})`;
    case 'SecretDeleted':
      return 'secret deleted';
    case 'PodCreated': {
      const spec = envelope.data.pod.spec;
      return `created: ${spec.containers.map((c) => `${c.name}=${c.image}`).join(', ')}${spec.nodeName ? ` on ${spec.nodeName}` : ''}`;
    }
    case 'PodUpdated':
      return `updated to generation ${envelope.data.pod.metadata.generation ?? 1}: ${envelope.data.pod.spec.containers.map((c) => `${c.name}=${c.image}`).join(', ')}`;
    case 'PodScheduled':
      return `bound to node ${envelope.data.nodeName}`;
    case 'PodUnschedulable':
      return `unschedulable: ${envelope.data.message}`;
    case 'PodDeletionRequested':
      return `deletion requested (grace ${envelope.data.gracePeriodSeconds}s)`;
    case 'PodEvicted':
      return `evicted: ${envelope.data.message}`;
    case 'PodDeletionFinalized':
      return `gone without its node's confirmation: ${envelope.data.message}`;
    case 'PodAssigned':
      return `assigned to ${envelope.data.pod.spec.nodeName ?? '?'} (generation ${envelope.data.pod.metadata.generation ?? 1})`;
    case 'PodUnassigned':
      return `unassigned: stop within ${envelope.data.gracePeriodSeconds}s`;
    case 'PodStatusReported': {
      if (envelope.data.removed) return 'removed from the node';
      const s = envelope.data.status;
      const containers = (s.containerStatuses ?? []).map(containerState).join('; ');
      return `status ${s.phase}${s.podIP ? ` ip ${s.podIP}` : ''}${containers ? `: ${containers}` : ''}`;
    }
    case 'ContainerEvent': {
      const e = envelope.data;
      const exit = e.exitCode === undefined ? '' : ` exit ${e.exitCode}${e.exitReason ? ` (${e.exitReason})` : ''}`;
      return `container ${e.containerName} ${e.reason}${exit}`;
    }
    case 'PodEvent':
      return `${envelope.data.eventType} ${envelope.data.reason}: ${envelope.data.message}`;
    case 'BackoffRecorded': {
      const e = envelope.data;
      return e.kind === 'CrashLoop'
        ? `back-off: restarting ${e.containerName} (restart ${e.restartCount ?? '?'}); a next crash waits ${goDuration(e.delayMs)}${e.fresh ? ' (spec changed, back-off reset)' : ''}`
        : `back-off: pull of ${e.image ?? '?'} for ${e.containerName} failed; next pull in ${goDuration(e.delayMs)}`;
    }
    case 'ProbeResultChanged':
      return `${envelope.data.containerName} ${envelope.data.probe} probe now ${envelope.data.result}`;
    case 'ImagePullProgress':
      return `pulling for ${envelope.data.containerName}: ${pullProgressText(envelope.data)}`;
    case 'NodeRegistered': {
      const n = envelope.data.node;
      const taints = (n.spec.taints ?? []).map((t) => `${t.key}:${t.effect}`).join(',');
      return `registered: cpu ${n.status.allocatable.cpu ?? '?'}, memory ${n.status.allocatable.memory ?? '?'}, pods ${n.status.allocatable.pods ?? '?'}${taints ? `, taints ${taints}` : ''}`;
    }
    case 'NodeHeartbeat':
      return `heartbeat (${envelope.data.runningPods} pods)`;
    case 'NodeEvent':
      return `${envelope.data.eventType} ${envelope.data.reason}: ${envelope.data.message}`;
    case 'NodeSpecChanged':
      return envelope.data.unschedulable ? 'cordoned' : 'uncordoned';
    case 'MirrorPodUpdated':
      return `mirror of static pod ${envelope.data.pod.metadata.name}`;
    case 'RequestAudited': {
      const a = envelope.data;
      const what = `${a.resource}${a.subresource ? `/${a.subresource}` : ''}${a.name ? ` ${a.name}` : ''}`;
      return `${a.user} ${a.verb} ${what}: ${a.code}${a.reason ? ` ${a.reason}` : ''}${a.dryRun ? ' (dry run)' : ''}`;
    }
    case 'LeaseRenewed': {
      const l = envelope.data;
      return l.holderIdentity === '' ? `lease ${l.name} let go` : `lease ${l.name} held by ${l.holderIdentity} for ${l.leaseDurationSeconds}s`;
    }
  }
}
