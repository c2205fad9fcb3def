import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { ContractPipe, MessageController, skippedOf, type Delivery, type JetStreamContext } from '#bus';
import { STREAMS, type AnyEnvelope } from '#contracts';
import { FOLLOWED } from './scheduling.constants.js';
import { SchedulingService } from './scheduling.service.js';

/**
 * The scheduler's inputs, read with ordered consumers and rebuilt at every start: the
 * pods stream from its start, nodes and its own assignments from the last message per
 * subject. Every message asks for a scheduling pass.
 */
@MessageController()
export class SchedulingController {
  constructor(private readonly scheduling: SchedulingService) {}

  @EventPattern<string>(FOLLOWED.pods, { stream: STREAMS.pods, deliver: 'all' })
  pod(@Payload(ContractPipe) envelope: AnyEnvelope, @Ctx() ctx: JetStreamContext): void {
    this.scheduling.applyPod(envelope, ctx.getDelivery());
  }

  @EventPattern<string>(skippedOf(FOLLOWED.pods))
  podSkipped(@Payload() delivery: Delivery): void {
    this.scheduling.skipPod(delivery);
  }

  @EventPattern<string>(FOLLOWED.nodes, { stream: STREAMS.nodes, deliver: 'last_per_subject' })
  node(@Payload(ContractPipe) envelope: AnyEnvelope, @Ctx() ctx: JetStreamContext): void {
    this.scheduling.applyNode(envelope, ctx.getDelivery());
  }

  @EventPattern<string>(FOLLOWED.assignments, { stream: STREAMS.assign, deliver: 'last_per_subject' })
  assignment(@Payload(ContractPipe) envelope: AnyEnvelope, @Ctx() ctx: JetStreamContext): void {
    this.scheduling.applyAssignment(envelope, ctx.getDelivery());
  }
}
