import { IsBoolean, IsString, IsUUID, ValidateBy } from 'class-validator';
import type { PodStatus } from '../pod/pod-status.model.js';

const PHASES = ['Pending', 'Running', 'Succeeded', 'Failed', 'Unknown'];

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
      validate: (v: unknown) => typeof v === 'object' && v !== null && PHASES.includes((v as { phase?: string }).phase ?? ''),
      defaultMessage: () => `status must be an object whose phase is one of ${PHASES.join(', ')}`,
    },
  })
  status: PodStatus;

  /** True once the pod was unassigned and every container of it is gone from the node. */
  @IsBoolean()
  removed: boolean;
}
