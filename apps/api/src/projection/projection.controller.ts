import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { ContractPipe, MessageController, skippedOf, type Delivery, type JetStreamContext } from '#bus';
import { STREAMS, type AnyEnvelope } from '#contracts';
import { PROJECTED } from './projection.constants.js';
import { ProjectionService } from './projection.service.js';

/**
 * The API's projections read the streams with ordered consumers: everything in memory,
 * nothing acknowledged, rebuilt from the log at every start. Pods and events from their
 * first message; nodes from the last message per subject; ConfigMaps and Secrets from the
 * config stream, which keeps each one's newest message.
 */
@MessageController()
export class ProjectionController {
  constructor(private readonly projection: ProjectionService) {}

  @EventPattern<string>(PROJECTED.pods, { stream: STREAMS.pods, deliver: 'all' })
  pods(@Payload(ContractPipe) envelope: AnyEnvelope, @Ctx() ctx: JetStreamContext): void {
    this.projection.applyPods(envelope, ctx.getDelivery());
  }

  @EventPattern<string>(skippedOf(PROJECTED.pods))
  podSkipped(@Payload() delivery: Delivery): void {
    this.projection.skipPods(delivery);
  }

  @EventPattern<string>(PROJECTED.nodes, { stream: STREAMS.nodes, deliver: 'last_per_subject' })
  nodes(@Payload(ContractPipe) envelope: AnyEnvelope, @Ctx() ctx: JetStreamContext): void {
    this.projection.applyNodes(envelope, ctx.getDelivery());
  }

  @EventPattern<string>(PROJECTED.config, { stream: STREAMS.config, filter: '>', deliver: 'all' })
  config(@Payload(ContractPipe) envelope: AnyEnvelope, @Ctx() ctx: JetStreamContext): void {
    this.projection.applyConfig(envelope, ctx.getDelivery());
  }

  @EventPattern<string>(skippedOf(PROJECTED.config))
  configSkipped(@Payload() delivery: Delivery): void {
    this.projection.skipConfig(delivery);
  }

  @EventPattern<string>(PROJECTED.events, { stream: STREAMS.events, deliver: 'all' })
  events(@Payload(ContractPipe) envelope: AnyEnvelope, @Ctx() ctx: JetStreamContext): void {
    this.projection.applyEvents(envelope, ctx.getDelivery());
  }
}
