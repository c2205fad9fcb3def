import { IsString, IsUUID, MinLength } from '../class-validator.js';

/**
 * No node can take the pod now; it stays Pending and is tried again when nodes or pods
 * change. Writer: scheduler, on `pods.<ns>.<name>`, with optimistic concurrency, only when
 * the message differs from the last one recorded.
 */
export class PodUnschedulableEvent {
  /** The pod incarnation this is about. */
  @IsUUID()
  uid: string;

  /** Why, in kube-scheduler's words: "0/3 nodes are available: 1 Insufficient memory, …". */
  @IsString()
  @MinLength(1)
  message: string;
}
