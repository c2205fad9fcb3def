import { IsString, IsUUID, MinLength } from 'class-validator';

/** A pod was bound to a node. Writer: scheduler, on `pods.<ns>.<name>`, with optimistic concurrency. */
export class PodScheduledEvent {
  /** The pod incarnation this binding is for. */
  @IsUUID()
  uid: string;

  /** The node chosen. */
  @IsString()
  @MinLength(1)
  nodeName: string;
}
