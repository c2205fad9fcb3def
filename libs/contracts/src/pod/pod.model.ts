import { Type } from 'class-transformer';
import { Equals, IsDefined, IsObject, IsOptional, ValidateNested } from '../class-validator.js';
import { ObjectMeta } from './object-meta.model.js';
import { PodSpec } from './pod-spec.model.js';
import type { PodStatus } from './pod-status.model.js';

/** A Pod manifest as a user submits it: Kubernetes core/v1, the fields jetlet supports. */
export class PodManifest {
  @IsOptional()
  @Equals('v1', { message: 'apiVersion must be v1' })
  apiVersion?: string;

  @IsOptional()
  @Equals('Pod', { message: 'kind must be Pod' })
  kind?: string;

  @IsDefined()
  @ValidateNested()
  @Type(() => ObjectMeta)
  metadata: ObjectMeta;

  @IsDefined()
  @ValidateNested()
  @Type(() => PodSpec)
  spec: PodSpec;

  /** A submitted status is ignored, as Kubernetes does on create; it is accepted so manifests round-trip. */
  @IsOptional()
  @IsObject()
  status?: object;
}

/** A pod as jetlet serves it. */
export interface Pod {
  apiVersion: 'v1';
  kind: 'Pod';
  metadata: ObjectMeta;
  spec: PodSpec;
  status: PodStatus;
}
