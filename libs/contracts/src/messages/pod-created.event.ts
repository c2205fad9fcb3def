import { Type } from 'class-transformer';
import { IsDefined, ValidateNested } from '../class-validator.js';
import { PodManifest } from '../pod/pod.model.js';

/** A pod was created. Writer: api, on `pods.<ns>.<name>`, first message of an incarnation. */
export class PodCreatedEvent {
  /** The pod as accepted: metadata with uid, namespace and creationTimestamp; spec with defaults applied. */
  @IsDefined()
  @ValidateNested()
  @Type(() => PodManifest)
  pod: PodManifest;
}
