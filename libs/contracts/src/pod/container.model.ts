import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsIn, IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min, MinLength, ValidateNested } from 'class-validator';
import { IsQuantityMap } from './quantity.validator.js';
import { IsEmptyObject } from './empty-object.validator.js';
import { IsImageReference } from './image-reference.js';
import { DNS1123_LABEL, IsCleanAbsolutePath, IsDns1123Label } from '../names.js';
import { Lifecycle, Probe } from './probe.model.js';

/** An environment variable with a literal value (valueFrom is not supported yet). */
export class EnvVar {
  @IsString()
  @Matches(/^[-._a-zA-Z][-._a-zA-Z0-9]*$/, { message: 'name must be a valid environment variable name' })
  name: string;

  @IsOptional()
  @IsString()
  value?: string;
}

export class ContainerPort {
  /** Port the container listens on, 1–65535. */
  @IsInt()
  @Min(1)
  @Max(65535)
  containerPort: number;

  @IsOptional()
  @IsString()
  @MaxLength(15)
  @Matches(DNS1123_LABEL, { message: 'name must be a lowercase RFC 1123 label' })
  name?: string;

  /** Defaults to TCP. */
  @IsOptional()
  @IsIn(['TCP', 'UDP', 'SCTP'])
  protocol?: 'TCP' | 'UDP' | 'SCTP';

  /** Accepted and recorded; host port publishing comes with the scheduler's port filter. */
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(65535)
  hostPort?: number;
}

/** Compute resources as Kubernetes quantities ("100m", "64Mi"); keys cpu and memory. */
export class ResourceRequirements {
  @IsOptional()
  @IsQuantityMap()
  requests?: Record<string, string>;

  @IsOptional()
  @IsQuantityMap()
  limits?: Record<string, string>;
}

export const PULL_POLICIES = ['Always', 'IfNotPresent', 'Never'] as const;
export type PullPolicy = (typeof PULL_POLICIES)[number];

export class Container {
  /** Unique within the pod; a DNS-1123 label. */
  @IsDns1123Label()
  name: string;

  /** Image reference as Docker parses it (`[host[:port]/]path[:tag][@digest]`); pulled per imagePullPolicy. */
  @IsString()
  @MinLength(1)
  @IsImageReference()
  image: string;

  /** Replaces the image's ENTRYPOINT. */
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(4096)
  @IsString({ each: true })
  command?: string[];

  /** Replaces the image's CMD. */
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(4096)
  @IsString({ each: true })
  args?: string[];

  /** Absolute and clean, as Docker requires. */
  @IsOptional()
  @IsCleanAbsolutePath()
  workingDir?: string;

  @IsOptional()
  @IsArray()
  @ArrayMaxSize(1000)
  @ValidateNested({ each: true })
  @Type(() => EnvVar)
  env?: EnvVar[];

  @IsOptional()
  @IsArray()
  @ArrayMaxSize(100)
  @ValidateNested({ each: true })
  @Type(() => ContainerPort)
  ports?: ContainerPort[];

  @IsOptional()
  @ValidateNested()
  @Type(() => ResourceRequirements)
  resources?: ResourceRequirements;

  @IsOptional()
  @IsIn(PULL_POLICIES)
  imagePullPolicy?: PullPolicy;

  @IsOptional()
  @ValidateNested()
  @Type(() => Probe)
  livenessProbe?: Probe;

  @IsOptional()
  @ValidateNested()
  @Type(() => Probe)
  readinessProbe?: Probe;

  @IsOptional()
  @ValidateNested()
  @Type(() => Probe)
  startupProbe?: Probe;

  @IsOptional()
  @ValidateNested()
  @Type(() => Lifecycle)
  lifecycle?: Lifecycle;

  /** Where the container writes why it ended; defaults to /dev/termination-log. */
  @IsOptional()
  @IsCleanAbsolutePath()
  terminationMessagePath?: string;

  /** File (default) or FallbackToLogsOnError: the log tail when the file is empty and the container failed. */
  @IsOptional()
  @IsIn(['File', 'FallbackToLogsOnError'])
  terminationMessagePolicy?: 'File' | 'FallbackToLogsOnError';

  /** Container security settings; only an empty one, which changes nothing. */
  @IsOptional()
  @IsEmptyObject()
  securityContext?: Record<string, never>;
}
