import { Type } from 'class-transformer';
import { IsDefined, IsUUID, ValidateNested } from '../class-validator.js';
import { PodManifest } from '../pod/pod.model.js';

/**
 * A pod's spec changed in a way Kubernetes allows on a running pod (a container's image)
 * or its labels/annotations changed. Writer: api, on `pods.<ns>.<name>`, with optimistic
 * concurrency. `pod.metadata.generation` counts spec changes.
 */
export class PodUpdatedEvent {
  @IsUUID()
  uid: string;

  /** The whole pod after the update: metadata and spec. */
  @IsDefined()
  @ValidateNested()
  @Type(() => PodManifest)
  pod: PodManifest;
}
