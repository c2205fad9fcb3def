import { IsInt, IsISO8601, IsUUID, Min } from 'class-validator';

/** A user asked for a pod's deletion. Writer: api, on `pods.<ns>.<name>`. */
export class PodDeletionRequestedEvent {
  @IsUUID()
  uid: string;

  /** Seconds between SIGTERM and SIGKILL for this deletion. */
  @IsInt()
  @Min(0)
  gracePeriodSeconds: number;

  /** ISO 8601 time of the request. */
  @IsISO8601()
  deletionTimestamp: string;
}
