import { IsBoolean, IsString, IsUUID, ValidateBy } from '../class-validator.js';
import type { PodStatus } from '../pod/pod-status.model.js';

const PHASES = ['Pending', 'Running', 'Succeeded', 'Failed', 'Unknown'];

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The parts of a status every reader relies on: a known phase, and lists where lists belong. */
function isPodStatus(v: unknown): boolean {
  if (!isObject(v) || !PHASES.includes(String(v.phase))) return false;
  if (
    v.conditions !== undefined &&
    !(Array.isArray(v.conditions) && v.conditions.every((c) => isObject(c) && typeof c.type === 'string' && typeof c.status === 'string'))
  )
    return false;
  if (v.containerStatuses === undefined) return true;
  return (
    Array.isArray(v.containerStatuses) &&
    v.containerStatuses.every(
      (s) =>
        isObject(s) &&
        typeof s.name === 'string' &&
        isObject(s.state) &&
        isObject(s.lastState) &&
        typeof s.restartCount === 'number' &&
        typeof s.ready === 'boolean',
    )
  );
}

/** What the agent observes of a pod. Writer: the agent of `nodeName`, on `podstatus.<node>.<uid>`. */
export class PodStatusReportedEvent {
  @IsUUID()
  uid: string;

  @IsString()
  namespace: string;

  @IsString()
  name: string;

  @IsString()
  nodeName: string;

  /** Kubernetes PodStatus; its phase is checked here, the rest is the agent's report. */
  @ValidateBy({
    name: 'isPodStatus',
    validator: {
      validate: isPodStatus,
      defaultMessage: () => `status must be a PodStatus: phase one of ${PHASES.join(', ')}, conditions and containerStatuses lists of their shapes`,
    },
  })
  status: PodStatus;

  /** True once the pod was unassigned and every container of it is gone from the node. */
  @IsBoolean()
  removed: boolean;
}
