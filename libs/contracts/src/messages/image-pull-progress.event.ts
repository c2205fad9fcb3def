import { IsInt, IsISO8601, IsString, IsUUID, Min, MinLength } from '../class-validator.js';

/**
 * How far the pull of a container's image has got, summed over its layers. Writer: the agent
 * of `nodeName`, on `events.<node>.<uid>`, while it pulls for that container: the first time
 * the image's size is known, at most once a second after that, and once complete, so
 * `jetctl apply --wait` can draw a progress bar. The `Pulled` event follows it.
 */
export class ImagePullProgressEvent {
  @IsUUID()
  uid: string;

  @IsString()
  namespace: string;

  @IsString()
  name: string;

  @IsString()
  @MinLength(1)
  nodeName: string;

  /** The container's name in the pod spec. */
  @IsString()
  @MinLength(1)
  containerName: string;

  @IsString()
  @MinLength(1)
  image: string;

  /** Layers the engine has named so far. */
  @IsInt()
  @Min(0)
  layers: number;

  /** Layers pulled and extracted, or already on the node. */
  @IsInt()
  @Min(0)
  layersDone: number;

  /** Bytes downloaded, over the layers whose size the engine has said. */
  @IsInt()
  @Min(0)
  currentBytes: number;

  /** Size of the layers whose size the engine has said; 0 before the first download starts. */
  @IsInt()
  @Min(0)
  totalBytes: number;

  /** ISO 8601 time the agent saw this figure. */
  @IsISO8601()
  observedAt: string;
}
