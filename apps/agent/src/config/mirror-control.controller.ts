import { EventPattern, Payload } from '@nestjs/microservices';
import { ContractPipe, MessageController, THIS_NODE } from '#bus';
import { MirrorPodDeleted, SUBJECTS } from '#contracts';
import { StaticPodSource } from './static-pod-source.service.js';

/** The API's word (core NATS) that it deleted the mirror pod of one of this node's static pods. */
@MessageController()
export class MirrorControlController {
  constructor(private readonly staticPods: StaticPodSource) {}

  @EventPattern<string>(SUBJECTS.mirrorDeleted(THIS_NODE))
  mirrorDeleted(@Payload(ContractPipe.of(MirrorPodDeleted)) message: MirrorPodDeleted): void {
    this.staticPods.mirrorDeleted(message.uid);
  }
}
