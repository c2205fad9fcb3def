import { Type } from 'class-transformer';
import { IsDefined, ValidateNested } from '../class-validator.js';
import { PodManifest } from '../pod/pod.model.js';

/**
 * The mirror of a static pod: a pod that runs on a node from a manifest file or URL of
 * that node, without the scheduler. Shown read-only by the API. Writer: the agent of
 * `pod.spec.nodeName`, on `mirror.<node>.<uid>`, at start, on every change, and again after
 * the mirror was deleted through the API. Removal is the pod's final PodStatusReported.
 */
export class MirrorPodUpdatedEvent {
  /** Metadata (uid, name `<name>-<node>`, the kubernetes.io/config.* annotations) and spec. */
  @IsDefined()
  @ValidateNested()
  @Type(() => PodManifest)
  pod: PodManifest;
}
