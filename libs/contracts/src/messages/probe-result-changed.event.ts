import { IsIn, IsISO8601, IsString, IsUUID, MinLength } from '../class-validator.js';

export const PROBE_TYPES = ['liveness', 'readiness', 'startup'] as const;

/**
 * One probe's result crossed its threshold (the kubelet's prober result cache changed):
 * readiness and startup results feed the pod's status, a liveness or startup failure kills
 * the container. Writer: the agent of `nodeName`, on `events.<node>.<uid>`.
 */
export class ProbeResultChangedEvent {
  @IsUUID()
  uid: string;

  @IsString()
  namespace: string;

  @IsString()
  name: string;

  @IsString()
  @MinLength(1)
  nodeName: string;

  /** The container's name in the pod spec. */
  @IsString()
  @MinLength(1)
  containerName: string;

  /** The runtime's id of the container probed, `docker://<id>`. */
  @IsString()
  containerID: string;

  @IsIn(PROBE_TYPES)
  probe: (typeof PROBE_TYPES)[number];

  /** The result now in force, after successThreshold or failureThreshold consecutive outcomes. */
  @IsIn(['success', 'failure'])
  result: 'success' | 'failure';

  /** ISO 8601 time of the probe run that changed it. */
  @IsISO8601()
  observedAt: string;
}
