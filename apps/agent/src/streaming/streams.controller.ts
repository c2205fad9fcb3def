import { EventPattern, MessagePattern, Payload } from '@nestjs/microservices';
import type { Observable } from 'rxjs';
import { MessageController, THIS_NODE, type RawMessage } from '#bus';
import { SUBJECTS } from '#contracts';
import { StreamInputPipe, type StreamInput } from './stream-input.pipe.js';
import { StreamResponder } from './stream-responder.service.js';

/**
 * Exec, attach and port-forward streams, on core NATS (nothing about them is stored): a
 * request's frames stream back to its reply subject, and the API's frames come on the
 * stream's input subject. A bad request is answered with an error frame by the responder; a
 * bad input frame is dropped, counted and logged by the transport.
 */
@MessageController()
export class StreamsController {
  constructor(private readonly responder: StreamResponder) {}

  @MessagePattern(SUBJECTS.streamRequests(THIS_NODE))
  request(@Payload() request: RawMessage): Observable<Buffer> {
    return this.responder.serve(request);
  }

  @EventPattern<string>(SUBJECTS.nodeStreamInput(THIS_NODE))
  input(@Payload(StreamInputPipe) input: StreamInput): void {
    this.responder.input(input);
  }
}
