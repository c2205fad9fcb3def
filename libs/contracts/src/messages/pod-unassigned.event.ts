import { IsInt, IsString, IsUUID, Max, Min } from '../class-validator.js';
import { MAX_TIMER_SECONDS } from '../limits.js';

/** Tombstone: the node must stop and remove this pod. Writer: scheduler, on `assign.<node>.<uid>`. */
export class PodUnassignedEvent {
  @IsUUID()
  uid: string;

  @IsString()
  namespace: string;

  @IsString()
  name: string;

  /** Seconds between SIGTERM and SIGKILL. */
  @IsInt()
  @Min(0)
  @Max(MAX_TIMER_SECONDS)
  gracePeriodSeconds: number;
}
