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
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateNested,
} from '../class-validator.js';
import { IsQuantityMap } from './quantity.validator.js';
import { IsImageReference } from './image-reference.js';
import { DNS1123_LABEL, IsCleanAbsolutePath, IsDns1123Label, IsDns1123Subdomain } from '../names.js';
import { Lifecycle, Probe } from './probe.model.js';

/** Kubernetes' environment variable names: any printable ASCII but '=' (`IsEnvVarName`, relaxed in 1.30). */
/** A Linux capability name without its CAP_ prefix, or ALL (Docker accepts both spellings). */
export const CAPABILITY = /^(CAP_)?[A-Z_]+$/;

export const ENV_VAR_NAME = /^[\x20-\x3c\x3e-\x7e]+$/;

/** One key of a ConfigMap. */
export class ConfigMapKeySelector {
  /** The ConfigMap, in the pod's namespace. */
  @IsDns1123Subdomain()
  name: string;

  @IsString()
  @MinLength(1)
  @MaxLength(253)
  key: string;

  /** When true, a missing ConfigMap or key leaves the variable unset instead of failing the container. */
  @IsOptional()
  @IsBoolean()
  optional?: boolean;
}

/** One key of a Secret. */
export class SecretKeySelector {
  /** The Secret, in the pod's namespace. */
  @IsDns1123Subdomain()
  name: string;

  @IsString()
  @MinLength(1)
  @MaxLength(253)
  key: string;

  @IsOptional()
  @IsBoolean()
  optional?: boolean;
}

/** A field of the pod (the downward API). */
export class ObjectFieldSelector {
  /** Defaults to v1. */
  @IsOptional()
  @IsIn(['v1'])
  apiVersion?: string;

  /** `metadata.name`, `metadata.namespace`, `metadata.uid`, `metadata.labels['k']`, `metadata.annotations['k']`, `spec.nodeName`, `spec.serviceAccountName`, `status.hostIP(s)`, `status.podIP(s)`. */
  @IsString()
  @MaxLength(512)
  fieldPath: string;
}

/** A resource of a container (the downward API), in units of `divisor`. */
export class ResourceFieldSelector {
  /** Defaults to the container the variable belongs to (required in volumes). */
  @IsOptional()
  @IsDns1123Label()
  containerName?: string;

  @IsIn(['limits.cpu', 'limits.memory', 'limits.ephemeral-storage', 'requests.cpu', 'requests.memory', 'requests.ephemeral-storage'])
  resource: string;

  /** A quantity: 1 (the default), 1m, 1Ki, 1Mi... */
  @IsOptional()
  @IsString()
  @Matches(/^(0|1|1m|1k|1M|1G|1T|1P|1E|1Ki|1Mi|1Gi|1Ti|1Pi|1Ei)$/, {
    message: 'Invalid value: divisor must be one of 0 (the same as 1), 1, 1m, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei',
  })
  divisor?: string;
}

/** Where a variable's value comes from; exactly one source. */
export class EnvVarSource {
  @IsOptional()
  @ValidateNested()
  @Type(() => ConfigMapKeySelector)
  configMapKeyRef?: ConfigMapKeySelector;

  @IsOptional()
  @ValidateNested()
  @Type(() => SecretKeySelector)
  secretKeyRef?: SecretKeySelector;

  @IsOptional()
  @ValidateNested()
  @Type(() => ObjectFieldSelector)
  fieldRef?: ObjectFieldSelector;

  @IsOptional()
  @ValidateNested()
  @Type(() => ResourceFieldSelector)
  resourceFieldRef?: ResourceFieldSelector;
}

/** An environment variable: a literal value (with `$(VAR)` references) or a value from a source. */
export class EnvVar {
  @IsString()
  @Matches(ENV_VAR_NAME, { message: "Invalid value: a valid environment variable name must consist only of printable ASCII characters other than '='" })
  name: string;

  @IsOptional()
  @IsString()
  value?: string;

  @IsOptional()
  @ValidateNested()
  @Type(() => EnvVarSource)
  valueFrom?: EnvVarSource;
}

/** A whole ConfigMap or Secret as variables. */
export class ConfigMapEnvSource {
  @IsDns1123Subdomain()
  name: string;

  @IsOptional()
  @IsBoolean()
  optional?: boolean;
}

export class SecretEnvSource {
  @IsDns1123Subdomain()
  name: string;

  @IsOptional()
  @IsBoolean()
  optional?: boolean;
}

/** Every key of a ConfigMap or a Secret as a variable, named `prefix` + key. */
export class EnvFromSource {
  @IsOptional()
  @IsString()
  @MaxLength(253)
  prefix?: string;

  @IsOptional()
  @ValidateNested()
  @Type(() => ConfigMapEnvSource)
  configMapRef?: ConfigMapEnvSource;

  @IsOptional()
  @ValidateNested()
  @Type(() => SecretEnvSource)
  secretRef?: SecretEnvSource;
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

  /** Published on every address of the node (a Docker port binding on the pod's sandbox); the scheduler keeps two pods from claiming one. */
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

/** Where a container sees a volume. */
export class VolumeMount {
  /** A volume of the pod. */
  @IsString()
  @MinLength(1)
  name: string;

  /** Absolute; unique within the container. */
  @IsString()
  @MinLength(1)
  @MaxLength(4096)
  mountPath: string;

  /** A path inside the volume to mount instead of its root; relative, without `..`. Not updated when the object changes. */
  @IsOptional()
  @IsString()
  @MaxLength(4096)
  subPath?: string;

  @IsOptional()
  @IsBoolean()
  readOnly?: boolean;
}

/** Linux capabilities, as `CAP_`-less names (NET_ADMIN) or ALL. */
export class Capabilities {
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(64)
  @IsString({ each: true })
  @Matches(CAPABILITY, { each: true, message: 'Invalid value: must be a capability name such as NET_ADMIN, or ALL' })
  add?: string[];

  @IsOptional()
  @IsArray()
  @ArrayMaxSize(64)
  @IsString({ each: true })
  @Matches(CAPABILITY, { each: true, message: 'Invalid value: must be a capability name such as NET_ADMIN, or ALL' })
  drop?: string[];
}

/** A seccomp profile; jetlet runs Docker's default profile, so only RuntimeDefault (or no profile asked for). */
export class SeccompProfile {
  @IsIn(['RuntimeDefault'])
  type: 'RuntimeDefault';
}

/** Container security settings; each one set here wins over the pod's. */
export class SecurityContext {
  /** The uid the process runs as; the image's USER when unset. */
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(2147483647)
  runAsUser?: number;

  /** The primary gid; the image's (or 0) when unset. */
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(2147483647)
  runAsGroup?: number;

  /** When true the container is refused (CreateContainerConfigError) if it would run as uid 0. */
  @IsOptional()
  @IsBoolean()
  runAsNonRoot?: boolean;

  @IsOptional()
  @IsBoolean()
  readOnlyRootFilesystem?: boolean;

  @IsOptional()
  @ValidateNested()
  @Type(() => Capabilities)
  capabilities?: Capabilities;

  /** Subject to Pod Security admission (baseline and restricted refuse it). */
  @IsOptional()
  @IsBoolean()
  privileged?: boolean;

  /** False sets no_new_privs on the process (Docker's no-new-privileges). */
  @IsOptional()
  @IsBoolean()
  allowPrivilegeEscalation?: boolean;

  @IsOptional()
  @ValidateNested()
  @Type(() => SeccompProfile)
  seccompProfile?: SeccompProfile;
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
  @Type(() => EnvFromSource)
  envFrom?: EnvFromSource[];

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

  /** Only on an init container, and only `Always`: the init container is a sidecar (Kubernetes 1.29+). */
  @IsOptional()
  @IsIn(['Always'])
  restartPolicy?: 'Always';

  /** Where the pod's volumes appear in this container. */
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(100)
  @ValidateNested({ each: true })
  @Type(() => VolumeMount)
  volumeMounts?: VolumeMount[];

  /** Container security settings, over the pod's. */
  @IsOptional()
  @ValidateNested()
  @Type(() => SecurityContext)
  securityContext?: SecurityContext;

  /** Keep a stdin open for the main process, which `kubectl attach -i` writes to; without it the process reads end of file at once. */
  @IsOptional()
  @IsBoolean()
  stdin?: boolean;

  /** With stdin: the stdin closes when the first attached client disconnects, and is never opened again for this run. */
  @IsOptional()
  @IsBoolean()
  stdinOnce?: boolean;

  /** Give the main process a terminal (stdout and stderr become one stream); an attach must then ask for one. */
  @IsOptional()
  @IsBoolean()
  tty?: boolean;
}

/**
 * A container added to a running pod to look into it (`kubectl debug`), through the pod's
 * `ephemeralcontainers` subresource only. It joins the pod's network namespace (and its
 * target's process namespace), is never restarted, and may have no ports, probes, lifecycle
 * hooks or resources.
 */
export class EphemeralContainer extends Container {
  /** A container of the pod whose process namespace this one joins, so it sees (and may signal) that container's processes. */
  @IsOptional()
  @IsDns1123Label()
  targetContainerName?: string;
}
