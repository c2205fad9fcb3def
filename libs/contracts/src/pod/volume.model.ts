import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Matches,
  MaxLength,
  Min,
  MinLength,
  Max,
  ValidateNested,
} from '../class-validator.js';
import { IsDns1123Label, IsDns1123Subdomain } from '../names.js';
import { QUANTITY } from './quantity.validator.js';
import { ObjectFieldSelector, ResourceFieldSelector } from './container.model.js';

/** The largest file mode a volume may give (0777 octal), as Kubernetes allows. */
export const MAX_VOLUME_FILE_MODE = 0o777;

/** hostPath types, as Kubernetes checks them before mounting ("" checks nothing). */
export const HOST_PATH_TYPES = ['', 'DirectoryOrCreate', 'Directory', 'FileOrCreate', 'File', 'Socket', 'CharDevice', 'BlockDevice'] as const;
export type HostPathType = (typeof HOST_PATH_TYPES)[number];

/** A file mode: 0–0777 (octal; JSON carries it as a decimal number, 420 for 0644). */
function IsFileMode(): PropertyDecorator {
  return (target, key) => {
    IsInt({ message: 'Invalid value: must be a number between 0 and 0777 (octal), both inclusive' })(target, key);
    Min(0, { message: 'Invalid value: must be a number between 0 and 0777 (octal), both inclusive' })(target, key);
    Max(MAX_VOLUME_FILE_MODE, { message: 'Invalid value: must be a number between 0 and 0777 (octal), both inclusive' })(target, key);
  };
}

/** One key of a ConfigMap or Secret projected to a file at `path`. */
export class KeyToPath {
  @IsString()
  @MinLength(1)
  @MaxLength(253)
  key: string;

  /** Relative, without `..`; the file's place in the volume. */
  @IsString()
  @MinLength(1)
  @MaxLength(4096)
  path: string;

  /** The file's mode; defaults to the volume's defaultMode. */
  @IsOptional()
  @IsFileMode()
  mode?: number;
}

/** A scratch directory that lives as long as the pod: on the node's disk, or in memory (tmpfs). */
export class EmptyDirVolumeSource {
  /** "" (the node's disk, the default) or Memory (a tmpfs). */
  @IsOptional()
  @IsIn(['', 'Memory'])
  medium?: '' | 'Memory';

  /** The most the volume may hold; a Memory volume's tmpfs gets this size. */
  @IsOptional()
  @IsString()
  @Matches(QUANTITY, { message: 'Invalid value: must be a quantity' })
  sizeLimit?: string;
}

/** A file or directory of the node. */
export class HostPathVolumeSource {
  @IsString()
  @MinLength(1)
  @MaxLength(4096)
  path: string;

  /** What must be at `path` (checked before each container is made); "" checks nothing. */
  @IsOptional()
  @IsIn(HOST_PATH_TYPES)
  type?: HostPathType;
}

export class ConfigMapVolumeSource {
  @IsDns1123Subdomain()
  name: string;

  /** Only these keys, at these paths; all keys (each at its own name) when unset. */
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(1000)
  @ValidateNested({ each: true })
  @Type(() => KeyToPath)
  items?: KeyToPath[];

  /** Mode of files without their own; defaults to 0644. */
  @IsOptional()
  @IsFileMode()
  defaultMode?: number;

  /** When true, a missing ConfigMap (or item key) gives an empty volume instead of a failed mount. */
  @IsOptional()
  @IsBoolean()
  optional?: boolean;
}

export class SecretVolumeSource {
  @IsDns1123Subdomain()
  secretName: string;

  @IsOptional()
  @IsArray()
  @ArrayMaxSize(1000)
  @ValidateNested({ each: true })
  @Type(() => KeyToPath)
  items?: KeyToPath[];

  /** Mode of files without their own; defaults to 0644. */
  @IsOptional()
  @IsFileMode()
  defaultMode?: number;

  @IsOptional()
  @IsBoolean()
  optional?: boolean;
}

/** One file of the downward API: a pod field or a container resource. */
export class DownwardAPIVolumeFile {
  @IsString()
  @MinLength(1)
  @MaxLength(4096)
  path: string;

  /** `metadata.name`, `metadata.namespace`, `metadata.uid`, `metadata.labels`, `metadata.annotations` (or one key of either). */
  @IsOptional()
  @ValidateNested()
  @Type(() => ObjectFieldSelector)
  fieldRef?: ObjectFieldSelector;

  /** containerName is required in a volume. */
  @IsOptional()
  @ValidateNested()
  @Type(() => ResourceFieldSelector)
  resourceFieldRef?: ResourceFieldSelector;

  @IsOptional()
  @IsFileMode()
  mode?: number;
}

export class DownwardAPIVolumeSource {
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(1000)
  @ValidateNested({ each: true })
  @Type(() => DownwardAPIVolumeFile)
  items?: DownwardAPIVolumeFile[];

  @IsOptional()
  @IsFileMode()
  defaultMode?: number;
}

/** A ConfigMap inside a projected volume. */
export class ConfigMapProjection {
  @IsDns1123Subdomain()
  name: string;

  @IsOptional()
  @IsArray()
  @ArrayMaxSize(1000)
  @ValidateNested({ each: true })
  @Type(() => KeyToPath)
  items?: KeyToPath[];

  @IsOptional()
  @IsBoolean()
  optional?: boolean;
}

/** A Secret inside a projected volume. */
export class SecretProjection {
  @IsDns1123Subdomain()
  name: string;

  @IsOptional()
  @IsArray()
  @ArrayMaxSize(1000)
  @ValidateNested({ each: true })
  @Type(() => KeyToPath)
  items?: KeyToPath[];

  @IsOptional()
  @IsBoolean()
  optional?: boolean;
}

export class DownwardAPIProjection {
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(1000)
  @ValidateNested({ each: true })
  @Type(() => DownwardAPIVolumeFile)
  items?: DownwardAPIVolumeFile[];
}

/** One source of a projected volume; exactly one of its fields. */
export class VolumeProjection {
  @IsOptional()
  @ValidateNested()
  @Type(() => ConfigMapProjection)
  configMap?: ConfigMapProjection;

  @IsOptional()
  @ValidateNested()
  @Type(() => SecretProjection)
  secret?: SecretProjection;

  @IsOptional()
  @ValidateNested()
  @Type(() => DownwardAPIProjection)
  downwardAPI?: DownwardAPIProjection;
}

/** Several ConfigMaps, Secrets and downward API files in one directory. */
export class ProjectedVolumeSource {
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(100)
  @ValidateNested({ each: true })
  @Type(() => VolumeProjection)
  sources?: VolumeProjection[];

  @IsOptional()
  @IsFileMode()
  defaultMode?: number;
}

/** The volume sources jetlet mounts, by their field name in a Volume. */
export const VOLUME_SOURCES = ['emptyDir', 'hostPath', 'configMap', 'secret', 'downwardAPI', 'projected'] as const;
export type VolumeSourceKind = (typeof VOLUME_SOURCES)[number];

/** A directory the pod's containers can mount; exactly one source. */
export class Volume {
  /** Unique within the pod; a DNS-1123 label. */
  @IsDns1123Label()
  name: string;

  @IsOptional()
  @ValidateNested()
  @Type(() => EmptyDirVolumeSource)
  emptyDir?: EmptyDirVolumeSource;

  @IsOptional()
  @ValidateNested()
  @Type(() => HostPathVolumeSource)
  hostPath?: HostPathVolumeSource;

  @IsOptional()
  @ValidateNested()
  @Type(() => ConfigMapVolumeSource)
  configMap?: ConfigMapVolumeSource;

  @IsOptional()
  @ValidateNested()
  @Type(() => SecretVolumeSource)
  secret?: SecretVolumeSource;

  @IsOptional()
  @ValidateNested()
  @Type(() => DownwardAPIVolumeSource)
  downwardAPI?: DownwardAPIVolumeSource;

  @IsOptional()
  @ValidateNested()
  @Type(() => ProjectedVolumeSource)
  projected?: ProjectedVolumeSource;
}
