import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { ContractPipe, MessageController, skippedOf, type Delivery, type JetStreamContext } from '#bus';
import { STREAMS, type AnyEnvelope } from '#contracts';
import { CACHED } from './cache.constants.js';
import { SchedulerCache } from './scheduler-cache.service.js';

/**
 * The cache's inputs, read with ordered consumers and rebuilt at every start: the pods
 * stream from its start, nodes from the last message per subject.
 */
@MessageController()
export class CacheController {
  constructor(private readonly cache: SchedulerCache) {}

  @EventPattern<string>(CACHED.pods, { stream: STREAMS.pods, deliver: 'all' })
  pod(@Payload(ContractPipe) envelope: AnyEnvelope, @Ctx() ctx: JetStreamContext): void {
    this.cache.applyPod(envelope, ctx.getDelivery());
  }

  @EventPattern<string>(skippedOf(CACHED.pods))
  podSkipped(@Payload() delivery: Delivery): void {
    this.cache.skipPod(delivery);
  }

  @EventPattern<string>(CACHED.nodes, { stream: STREAMS.nodes, deliver: 'last_per_subject' })
  node(@Payload(ContractPipe) envelope: AnyEnvelope, @Ctx() ctx: JetStreamContext): void {
    this.cache.applyNode(envelope, ctx.getDelivery());
  }
}
