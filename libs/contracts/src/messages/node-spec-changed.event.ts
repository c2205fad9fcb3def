import { IsBoolean, IsString, MinLength } from 'class-validator';

/** An operator cordoned or uncordoned a node. Writer: api, on `nodes.<node>.spec`. */
export class NodeSpecChangedEvent {
  @IsString()
  @MinLength(1)
  nodeName: string;

  /** True: no new pods are scheduled onto the node; the pods on it keep running. */
  @IsBoolean()
  unschedulable: boolean;
}
