import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsIn, IsISO8601, IsInt, IsObject, Max, MaxLength, Min, IsOptional, IsString, ValidateNested } from '../class-validator.js';
import { MAX_TIMER_SECONDS } from '../limits.js';
import { IsAnnotationMap, IsDns1123Label, IsDns1123Subdomain, IsLabelMap } from '../names.js';

export { DNS1123_LABEL, DNS1123_SUBDOMAIN } from '../names.js';

/** The most managers an object's `managedFields` may list. */
export const MAX_MANAGED_FIELDS = 100;

/**
 * Which fields one manager owns (Kubernetes' ManagedFieldsEntry): written by the API on every
 * create, update and server-side apply.
 */
export class ManagedFieldsEntry {
  /** The field manager: the request's `fieldManager`, else the client's user agent up to its first `/`. */
  @IsString()
  @MaxLength(128)
  manager: string;

  /** `Apply` for server-side apply, `Update` for every other write. */
  @IsIn(['Apply', 'Update'])
  operation: 'Apply' | 'Update';

  /** The version the fields are named in; always `v1` here. */
  @IsString()
  apiVersion: string;

  /** ISO 8601 time of the manager's last change to its fields. */
  @IsOptional()
  @IsISO8601()
  time?: string;

  /** Always `FieldsV1`. */
  @IsOptional()
  @IsIn(['FieldsV1'])
  fieldsType?: 'FieldsV1';

  /** The owned fields as a tree: `f:<field>`, `k:<keys JSON>` for list items by key, `v:<value>`, `.` for the node itself. */
  @IsOptional()
  @IsObject()
  fieldsV1?: Record<string, unknown>;

  /** The subresource written through (`status`), if any. */
  @IsOptional()
  @IsString()
  subresource?: string;
}

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

  /** Who owns which fields, for server-side apply; maintained by the API. */
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_MANAGED_FIELDS)
  @ValidateNested({ each: true })
  @Type(() => ManagedFieldsEntry)
  managedFields?: ManagedFieldsEntry[];

  /** Accepted for compatibility with manifests that carry it; ignored. */
  @IsOptional()
  @IsString()
  generateName?: string;
}
