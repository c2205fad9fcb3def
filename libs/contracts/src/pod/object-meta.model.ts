import { IsISO8601, IsInt, Min, IsObject, IsOptional, IsString, Matches, MaxLength } from 'class-validator';

/** DNS-1123 subdomain: what Kubernetes allows as a pod or namespace name. */
export const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
/** DNS-1123 label: what Kubernetes allows as a container or port name. */
export const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** Kubernetes ObjectMeta, the subset jetlet keeps. */
export class ObjectMeta {
  /** Object name, unique within its namespace. Written by the user. */
  @IsString()
  @MaxLength(253)
  @Matches(DNS1123_SUBDOMAIN, { message: 'name must be a lowercase RFC 1123 subdomain' })
  name: string;

  /** Namespace; the API fills it from the URL when absent and rejects a mismatch. */
  @IsOptional()
  @IsString()
  @MaxLength(63)
  @Matches(DNS1123_SUBDOMAIN, { message: 'namespace must be a lowercase RFC 1123 label' })
  namespace?: string;

  /** Unique id of this incarnation of the object; assigned by the API. */
  @IsOptional()
  @IsString()
  uid?: string;

  @IsOptional()
  @IsObject()
  labels?: Record<string, string>;

  @IsOptional()
  @IsObject()
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
