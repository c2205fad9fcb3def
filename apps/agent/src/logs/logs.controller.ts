import { EventPattern, MessagePattern, Payload } from '@nestjs/microservices';
import type { Observable } from 'rxjs';
import { ContractPipe, MessageController, THIS_NODE, type RawMessage } from '#bus';
import { LogStreamControl, SUBJECTS } from '#contracts';
import { LogResponder, type LogAnswer } from './log-responder.service.js';

/**
 * Log requests and their flow control, on core NATS (nothing about logs is stored): a
 * request's answers stream back to its reply subject. A request is validated by the
 * responder, which answers a bad one with a protocol error; a bad control is dropped,
 * counted and logged by the transport.
 */
@MessageController()
export class LogsController {
  constructor(private readonly responder: LogResponder) {}

  @MessagePattern(SUBJECTS.logRequests(THIS_NODE))
  request(@Payload() request: RawMessage): Observable<LogAnswer> {
    return this.responder.serve(request);
  }

  @EventPattern<string>(SUBJECTS.nodeLogStreamControl(THIS_NODE))
  control(@Payload(ContractPipe.of(LogStreamControl)) control: LogStreamControl): void {
    this.responder.control(control);
  }
}
