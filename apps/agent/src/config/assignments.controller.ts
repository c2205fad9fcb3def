import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { ContractPipe, MessageController, type JetStreamContext } from '#bus';
import { STREAMS, type AnyEnvelope } from '#contracts';
import { ASSIGNMENTS } from './desired.constants.js';
import { DesiredStateService } from './desired-state.service.js';

/**
 * This node's assignments. The durable consumer is deleted and created again at every
 * start with last-per-subject delivery: its first deliveries are exactly the node's
 * current assignments, and then it delivers changes.
 */
@MessageController()
export class AssignmentsController {
  constructor(private readonly desired: DesiredStateService) {}

  @EventPattern<string>(ASSIGNMENTS, { stream: STREAMS.assign, durable: 'agent-{node}', deliver: 'last_per_subject', recreate: true })
  assignment(@Payload(ContractPipe) envelope: AnyEnvelope, @Ctx() ctx: JetStreamContext): Promise<void> {
    return this.desired.receive(envelope, ctx.getDelivery());
  }
}
