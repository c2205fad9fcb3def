import { IsBoolean } from '../class-validator.js';
import { IsDns1123Subdomain } from '../names.js';

/** An operator cordoned or uncordoned a node. Writer: api, on `nodes.<node>.spec`. */
export class NodeSpecChangedEvent {
  @IsDns1123Subdomain()
  nodeName: string;

  /** True: no new pods are scheduled onto the node; the pods on it keep running. */
  @IsBoolean()
  unschedulable: boolean;
}
