import { IsIn, IsISO8601, IsString, MinLength } from '../class-validator.js';

/** A Kubernetes Event about a node (an invalid static pod manifest, ...). Writer: that node's agent, on `events.<node>.node`. */
export class NodeEventEvent {
  @IsString()
  @MinLength(1)
  nodeName: string;

  @IsIn(['Normal', 'Warning'])
  eventType: 'Normal' | 'Warning';

  @IsString()
  @MinLength(1)
  reason: string;

  @IsString()
  message: string;

  /** ISO 8601 time the agent observed it. */
  @IsISO8601()
  observedAt: string;
}
