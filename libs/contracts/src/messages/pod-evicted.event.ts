import { IsISO8601, IsInt, IsString, IsUUID, Max, Min } from '../class-validator.js';
import { MAX_TIMER_SECONDS } from '../limits.js';

/**
 * The pod must go because its node stopped answering for longer than the pod tolerates
 * (the taint manager's eviction). Writer: scheduler, on `pods.<ns>.<name>`, with optimistic
 * concurrency. Read like a deletion request: the node stops the pod if it comes back.
 */
export class PodEvictedEvent {
  @IsUUID()
  uid: string;

  /** Seconds between SIGTERM and SIGKILL when the node stops it. */
  @IsInt()
  @Min(0)
  @Max(MAX_TIMER_SECONDS)
  gracePeriodSeconds: number;

  /** ISO 8601 time of the eviction. */
  @IsISO8601()
  deletionTimestamp: string;

  /** Why, for people: "Taint manager: deleting due to NoExecute taint". */
  @IsString()
  message: string;
}
