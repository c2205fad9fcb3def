import { IsBoolean, IsISO8601, IsOptional, IsString, IsUUID, Matches, MaxLength } from '../class-validator.js';
import { IsAnnotationMap, IsDns1123Label, IsDns1123Subdomain, IsLabelMap } from '../names.js';
import { IsBase64ConfigData, IsConfigData } from '../config/config-data.js';

/**
 * A ConfigMap was created or replaced: the whole object, so the newest message on its subject
 * is its state. Writer: api, on `configmaps.<ns>.<name>`, with optimistic concurrency.
 */
export class ConfigMapWrittenEvent {
  @IsDns1123Label()
  namespace: string;

  @IsDns1123Subdomain()
  name: string;

  /** Unique id of this incarnation; kept by updates. */
  @IsUUID()
  uid: string;

  /** RFC 3339 creation time. */
  @IsISO8601()
  creationTimestamp: string;

  @IsOptional()
  @IsLabelMap()
  labels?: Record<string, string>;

  @IsOptional()
  @IsAnnotationMap()
  annotations?: Record<string, string>;

  /** UTF-8 values by key. */
  @IsOptional()
  @IsConfigData()
  data?: Record<string, string>;

  /** Base64 values by key. */
  @IsOptional()
  @IsBase64ConfigData()
  binaryData?: Record<string, string>;

  @IsOptional()
  @IsBoolean()
  immutable?: boolean;
}

/** A ConfigMap was deleted: the tombstone on its subject. Writer: api, on `configmaps.<ns>.<name>`. */
export class ConfigMapDeletedEvent {
  @IsUUID()
  uid: string;
}

/**
 * A Secret was created or replaced: the whole object. Its values are either `sealed`
 * (AES-256-GCM under the cluster's secret key, see docs/architecture.md) or, when no key is
 * configured, in `data` as base64 (Kubernetes' `identity` provider). Writer: api, on
 * `secrets.<ns>.<name>`, with optimistic concurrency.
 */
export class SecretWrittenEvent {
  @IsDns1123Label()
  namespace: string;

  @IsDns1123Subdomain()
  name: string;

  @IsUUID()
  uid: string;

  @IsISO8601()
  creationTimestamp: string;

  @IsOptional()
  @IsLabelMap()
  labels?: Record<string, string>;

  @IsOptional()
  @IsAnnotationMap()
  annotations?: Record<string, string>;

  /** `Opaque`, `kubernetes.io/dockerconfigjson`, ... */
  @IsString()
  @MaxLength(253)
  type: string;

  /** Base64 values by key, when not sealed. */
  @IsOptional()
  @IsBase64ConfigData()
  data?: Record<string, string>;

  /**
   * `v1:<keyId>:<nonce>:<ciphertext and tag>` (base64 parts): `{data, annotations}` as JSON,
   * sealed; the annotations go in too because kubectl's last-applied copy holds the values.
   */
  @IsOptional()
  @IsString()
  @Matches(/^v1:[A-Za-z0-9_-]{1,64}:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+$/, { message: 'Invalid value: sealed must be v1:<keyId>:<nonce>:<ciphertext>' })
  sealed?: string;

  @IsOptional()
  @IsBoolean()
  immutable?: boolean;
}

/** A Secret was deleted: the tombstone on its subject. Writer: api, on `secrets.<ns>.<name>`. */
export class SecretDeletedEvent {
  @IsUUID()
  uid: string;
}
