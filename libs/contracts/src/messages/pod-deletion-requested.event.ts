import { IsISO8601, IsInt, IsUUID, Max, Min } from 'class-validator';
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
}
