import { IsIn, IsInt, IsISO8601, IsOptional, IsString, IsUUID, MaxLength, Min, MinLength } from '../class-validator.js';

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

  /** ISO 8601 time the agent observed it (of a series: its latest occurrence). */
  @IsISO8601()
  observedAt: string;

  /**
   * The series this message reports on: the agent aggregates identical repeats (same pod,
   * fieldPath, type, reason, message) as the kubelet's recorder does, and each message of a
   * series carries the same value, so the API folds them into one Event. Absent: a one-off.
   */
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(128)
  series?: string;

  /** Occurrences of the series so far, this one included; absent means 1. */
  @IsOptional()
  @IsInt()
  @Min(1)
  count?: number;

  /** ISO 8601 time of the series' first occurrence; absent means `observedAt`. */
  @IsOptional()
  @IsISO8601()
  firstObservedAt?: string;
}
