import { IsIn, IsInt, IsISO8601, IsOptional, IsString, IsUUID } from '../class-validator.js';

export const CONTAINER_EVENT_REASONS = ['Started', 'Died', 'OOMKilled', 'Restarted'] as const;
export type ContainerEventReason = (typeof CONTAINER_EVENT_REASONS)[number];

/**
 * A container's life-cycle event (the PLEG's output). Writer: the agent of `nodeName`, on `events.<node>.<uid>`. Its envelope id names the engine's event (`container-event.<container id>.<action>.<time in ns>`), so the same event told again is stored once.
 */
export class ContainerEventEvent {
  @IsUUID()
  uid: string;

  @IsString()
  namespace: string;

  @IsString()
  name: string;

  @IsString()
  nodeName: string;

  /** The container's name in the pod spec. */
  @IsString()
  containerName: string;

  /** The runtime's id of the container, `docker://<id>`. */
  @IsString()
  containerID: string;

  @IsIn(CONTAINER_EVENT_REASONS)
  reason: ContainerEventReason;

  /** Exit code, for Died and OOMKilled. */
  @IsOptional()
  @IsInt()
  exitCode?: number;

  /** Why it ended, for Died: Completed (exit 0), Error, or OOMKilled, as in the container's terminated state. */
  @IsOptional()
  @IsIn(['Completed', 'Error', 'OOMKilled'])
  exitReason?: 'Completed' | 'Error' | 'OOMKilled';

  /** ISO 8601 time the runtime saw it. */
  @IsISO8601()
  observedAt: string;
}
