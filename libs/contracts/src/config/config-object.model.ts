import { Type } from 'class-transformer';
import { Equals, IsBoolean, IsOptional, IsString, MaxLength, ValidateNested } from '../class-validator.js';
import { ObjectMeta } from '../pod/object-meta.model.js';
import { IsBase64ConfigData, IsConfigData } from './config-data.js';

/** Kubernetes core/v1 ConfigMap as a client writes it. */
export class ConfigMapManifest {
  @IsOptional()
  @Equals('v1')
  apiVersion?: 'v1';

  @IsOptional()
  @Equals('ConfigMap')
  kind?: 'ConfigMap';

  @ValidateNested()
  @Type(() => ObjectMeta)
  metadata: ObjectMeta;

  /** UTF-8 values by key. */
  @IsOptional()
  @IsConfigData()
  data?: Record<string, string>;

  /** Base64 values by key; a key may not be in both maps. */
  @IsOptional()
  @IsBase64ConfigData()
  binaryData?: Record<string, string>;

  /** Once true, data may not change and the flag may not be unset. */
  @IsOptional()
  @IsBoolean()
  immutable?: boolean;
}

/** Kubernetes core/v1 Secret as a client writes it. */
export class SecretManifest {
  @IsOptional()
  @Equals('v1')
  apiVersion?: 'v1';

  @IsOptional()
  @Equals('Secret')
  kind?: 'Secret';

  @ValidateNested()
  @Type(() => ObjectMeta)
  metadata: ObjectMeta;

  /** Base64 values by key. */
  @IsOptional()
  @IsBase64ConfigData()
  data?: Record<string, string>;

  /** Plain values by key, merged into `data` on write (and never shown back), as Kubernetes. */
  @IsOptional()
  @IsConfigData()
  stringData?: Record<string, string>;

  /** `Opaque` by default; `kubernetes.io/dockerconfigjson`, `kubernetes.io/tls`... are checked for their keys. */
  @IsOptional()
  @IsString()
  @MaxLength(253)
  type?: string;

  @IsOptional()
  @IsBoolean()
  immutable?: boolean;
}
