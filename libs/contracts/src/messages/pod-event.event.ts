import { IsIn, IsISO8601, IsOptional, IsString, IsUUID, MinLength } from 'class-validator';

/**
 * A Kubernetes Event about a pod, as the kubelet records them (Pulling, Pulled, Failed,
 * BackOff, Created, Started, Killing...). Writer: the agent of `nodeName`, on
 * `events.<node>.<uid>`. The API serves them as core/v1 Events.
 */
export class PodEventEvent {
  @IsUUID()
  uid: string;

  @IsString()
  namespace: string;

  @IsString()
  name: string;

  @IsString()
  nodeName: string;

  /** Normal or Warning, as in Kubernetes. */
  @IsIn(['Normal', 'Warning'])
  eventType: 'Normal' | 'Warning';

  /** A short CamelCase reason: Pulling, Pulled, Failed, BackOff, Created, Started, Killing. */
  @IsString()
  @MinLength(1)
  reason: string;

  /** Human-readable detail. */
  @IsString()
  message: string;

  /** The part of the pod it is about, `spec.containers{name}`; absent for the pod itself. */
  @IsOptional()
  @IsString()
  fieldPath?: string;

  /** ISO 8601 time the agent observed it. */
  @IsISO8601()
  observedAt: string;
}
