import { EventPattern, Payload } from '@nestjs/microservices';
import { MessageController, THIS_NODE, type RawMessage } from '#bus';
import { SUBJECTS } from '#contracts';
import { StaticPodSource } from './static-pod-source.service.js';

/** The API's word (core NATS) that it deleted the mirror pod of one of this node's static pods. */
@MessageController()
export class MirrorControlController {
  constructor(private readonly staticPods: StaticPodSource) {}

  @EventPattern<string>(SUBJECTS.mirrorDeleted(THIS_NODE))
  mirrorDeleted(@Payload() message: RawMessage): void {
    const uid = (message.json() as { uid?: unknown } | undefined)?.uid;
    if (typeof uid === 'string') this.staticPods.mirrorDeleted(uid);
  }
}
