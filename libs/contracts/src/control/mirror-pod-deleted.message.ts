import { IsUUID } from '../class-validator.js';

/**
 * The API deleted the mirror pod of a static pod. Core NATS, not a fact: the static pod runs
 * on, so its agent announces the mirror again. Writer: the API, on `SUBJECTS.mirrorDeleted(node)`.
 */
export class MirrorPodDeleted {
  /** The uid of the mirror pod the API deleted, which is its static pod's uid. */
  @IsUUID()
  uid: string;
}
