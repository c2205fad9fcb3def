import { IsISO8601, IsIn, IsInt, IsOptional, IsUUID, Max, Min } from '../class-validator.js';
import { MAX_TIMER_SECONDS } from '../limits.js';

/** A user asked for a pod's deletion. Writer: api, on `pods.<ns>.<name>`. */
export class PodDeletionRequestedEvent {
  @IsUUID()
  uid: string;

  /** Seconds between SIGTERM and SIGKILL for this deletion. */
  @IsInt()
  @Min(0)
  @Max(MAX_TIMER_SECONDS)
  gracePeriodSeconds: number;

  /** ISO 8601 time of the request. */
  @IsISO8601()
  deletionTimestamp: string;

  /** Set when the deletion is an eviction through the Eviction API (`kubectl drain`): the pod's DisruptionTarget reason. */
  @IsOptional()
  @IsIn(['EvictionByEvictionAPI'])
  disruption?: 'EvictionByEvictionAPI';
}
