import { Type } from 'class-transformer';
import { IsDefined, ValidateNested } from '../class-validator.js';
import { PodManifest } from '../pod/pod.model.js';

/** The node must run this pod. Writer: scheduler, on `assign.<node>.<uid>`. */
export class PodAssignedEvent {
  /** Metadata and spec (spec.nodeName set to the node). */
  @IsDefined()
  @ValidateNested()
  @Type(() => PodManifest)
  pod: PodManifest;
}
