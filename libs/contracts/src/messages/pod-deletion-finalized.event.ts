import { IsString, IsUUID, MaxLength } from '../class-validator.js';

/**
 * A deleted pod is gone although its node never confirmed it: the node does not exist, or
 * has not been heard from for the node grace period since the deletion (the pod garbage
 * collector's force deletion). Writer: scheduler, on `pods.<ns>.<name>`, with optimistic
 * concurrency. Read like the node's final `removed` report: the pod leaves the API.
 */
export class PodDeletionFinalizedEvent {
  @IsUUID()
  uid: string;

  /** Why, for people: "node ghost-1 does not exist". */
  @IsString()
  @MaxLength(1024)
  message: string;
}
