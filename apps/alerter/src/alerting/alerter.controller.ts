import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { ContractPipe, MessageController, type DeliverEnv, type JetStreamContext } from '#bus';
import { STREAMS, type AnyEnvelope } from '#contracts';
import { ALERT_SOURCES } from './alerter.patterns.js';
import { AlerterService } from './alerter.service.js';

/** Events from LOOKBACK_SECONDS before the consumer opens: what alerts on recent container facts need. */
const lookback = ({ nowMs, config }: DeliverEnv): { startTime: string } => ({
  startTime: new Date(nowMs - Number(config.LOOKBACK_SECONDS) * 1000).toISOString(),
});

/**
 * The alerter's durable consumers, created afresh at every start so the alerts are rebuilt
 * from the log: pods from the stream's start, events from LOOKBACK_SECONDS ago, nodes from
 * the last message per subject.
 */
@MessageController()
export class AlerterController {
  constructor(private readonly alerter: AlerterService) {}

  @EventPattern<string>(ALERT_SOURCES.pods, { stream: STREAMS.pods, durable: 'alerter-pods', deliver: 'all', recreate: true })
  pod(@Payload(ContractPipe) envelope: AnyEnvelope, @Ctx() ctx: JetStreamContext): void {
    this.alerter.receive(envelope, STREAMS.pods, ctx.getDelivery().seq);
  }

  @EventPattern<string>(ALERT_SOURCES.events, { stream: STREAMS.events, durable: 'alerter-events', deliver: lookback, recreate: true })
  event(@Payload(ContractPipe) envelope: AnyEnvelope, @Ctx() ctx: JetStreamContext): void {
    this.alerter.receive(envelope, STREAMS.events, ctx.getDelivery().seq);
  }

  @EventPattern<string>(ALERT_SOURCES.nodes, { stream: STREAMS.nodes, durable: 'alerter-nodes', deliver: 'last_per_subject', recreate: true })
  node(@Payload(ContractPipe) envelope: AnyEnvelope, @Ctx() ctx: JetStreamContext): void {
    this.alerter.receive(envelope, STREAMS.nodes, ctx.getDelivery().seq);
  }
}
