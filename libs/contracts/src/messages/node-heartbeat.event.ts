import { IsInt, IsISO8601, IsString, Min, MinLength } from '../class-validator.js';

/** The node's agent is alive. Writer: that node's agent, on `nodes.<node>.heartbeat`. */
export class NodeHeartbeatEvent {
  @IsString()
  @MinLength(1)
  nodeName: string;

  /** ISO 8601 time the agent sent it (the Lease's renewTime). */
  @IsISO8601()
  renewTime: string;

  /** Pods the agent currently runs. */
  @IsInt()
  @Min(0)
  runningPods: number;
}
