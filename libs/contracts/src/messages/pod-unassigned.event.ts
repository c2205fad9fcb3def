import { IsInt, IsString, IsUUID, Min } from 'class-validator';

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
  gracePeriodSeconds: number;
}
