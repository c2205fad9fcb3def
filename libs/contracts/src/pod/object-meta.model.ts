import { IsISO8601, IsInt, Max, Min, IsOptional, IsString } from 'class-validator';
import { MAX_TIMER_SECONDS } from '../limits.js';
import { IsAnnotationMap, IsDns1123Label, IsDns1123Subdomain, IsLabelMap } from '../names.js';

export { DNS1123_LABEL, DNS1123_SUBDOMAIN } from '../names.js';

/** Kubernetes ObjectMeta, the subset jetlet keeps. */
export class ObjectMeta {
  /** Object name, unique within its namespace. Written by the user. */
  @IsDns1123Subdomain()
  name: string;

  /** Namespace; the API fills it from the URL when absent and rejects a mismatch. */
  @IsOptional()
  @IsDns1123Label()
  namespace?: string;

  /** Unique id of this incarnation of the object; assigned by the API. */
  @IsOptional()
  @IsString()
  uid?: string;

  /** Kubernetes labels: qualified-name keys, values of at most 63 characters. */
  @IsOptional()
  @IsLabelMap()
  labels?: Record<string, string>;

  /** Kubernetes annotations: qualified-name keys, string values, at most 256 KiB in all. */
  @IsOptional()
  @IsAnnotationMap()
  annotations?: Record<string, string>;

  /** ISO 8601; assigned by the API. */
  @IsOptional()
  @IsISO8601()
  creationTimestamp?: string;

  /** Stream sequence of the newest fact the object reflects; assigned by the API. */
  @IsOptional()
  @IsString()
  resourceVersion?: string;

  /** ISO 8601 time the deletion was requested; assigned by the API. */
  @IsOptional()
  @IsISO8601()
  deletionTimestamp?: string;

  /** Seconds of grace granted by the deletion request. */
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(MAX_TIMER_SECONDS)
  deletionGracePeriodSeconds?: number;

  /** Counts spec changes: 1 at creation, +1 for each accepted update. Assigned by the API. */
  @IsOptional()
  @IsInt()
  @Min(1)
  generation?: number;

  /** Accepted for compatibility with manifests that carry it; ignored. */
  @IsOptional()
  @IsString()
  generateName?: string;
}
