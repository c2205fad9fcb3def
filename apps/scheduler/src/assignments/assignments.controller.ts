import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { ContractPipe, MessageController, type JetStreamContext } from '#bus';
import { STREAMS, type AnyEnvelope } from '#contracts';
import { ASSIGNMENTS } from './assignments.constants.js';
import { AssignmentsService } from './assignments.service.js';

/** The scheduler's own assignments, read back at every start from the last message per subject, then followed. */
@MessageController()
export class AssignmentsController {
  constructor(private readonly assignments: AssignmentsService) {}

  @EventPattern<string>(ASSIGNMENTS, { stream: STREAMS.assign, deliver: 'last_per_subject' })
  assignment(@Payload(ContractPipe) envelope: AnyEnvelope, @Ctx() ctx: JetStreamContext): void {
    this.assignments.apply(envelope, ctx.getDelivery());
  }
}
