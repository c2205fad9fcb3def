import { IsUUID } from '../class-validator.js';
import { IsDns1123Subdomain } from '../names.js';

/** A pod was bound to a node. Writer: scheduler, on `pods.<ns>.<name>`, with optimistic concurrency. */
export class PodScheduledEvent {
  /** The pod incarnation this binding is for. */
  @IsUUID()
  uid: string;

  /** The node chosen. */
  @IsDns1123Subdomain()
  nodeName: string;
}
