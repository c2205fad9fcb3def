import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
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
  ValidateNested,
} from '../class-validator.js';
import { MAX_CONTAINERS, MAX_TIMER_SECONDS } from '../limits.js';
import { IsDns1123Subdomain, IsLabelMap } from '../names.js';
import { Container, EphemeralContainer, SeccompProfile } from './container.model.js';
import { Volume } from './volume.model.js';
import { Toleration } from './toleration.model.js';

export const RESTART_POLICIES = ['Always', 'OnFailure', 'Never'] as const;
export type RestartPolicy = (typeof RESTART_POLICIES)[number];

/**
 * DNS policies jetlet accepts. There is no cluster DNS, so ClusterFirst (the default) and
 * ClusterFirstWithHostNet fall back to Default, as the kubelet does without one: the node's
 * resolver configuration. None needs dnsConfig, which jetlet does not support.
 */
export const DNS_POLICIES = ['ClusterFirst', 'ClusterFirstWithHostNet', 'Default'] as const;
export type DNSPolicy = (typeof DNS_POLICIES)[number];

/** The one scheduler jetlet runs; a pod naming another would wait for a scheduler that never comes. */
export const DEFAULT_SCHEDULER_NAME = 'default-scheduler';

/**
 * Namespaced sysctls Docker sets in a container's own namespaces (`net.*` in the pod's network
 * namespace, IPC ones in each container's); any other is a node-wide setting a pod may not change.
 */
export const NAMESPACED_SYSCTL = /^(kernel\.(shm[a-z_]*|msg[a-z_]*|sem)|fs\.mqueue\.[a-z_]+|net\.[a-z0-9_.\-/]+)$/;

/** A kernel parameter for the pod. */
export class Sysctl {
  @IsString()
  @MaxLength(253)
  @Matches(NAMESPACED_SYSCTL, {
    message: 'Invalid value: jetlet supports only namespaced sysctls Docker sets: kernel.shm*, kernel.msg*, kernel.sem, fs.mqueue.*, net.*',
  })
  name: string;

  @IsString()
  @MaxLength(4096)
  value: string;
}

/** Pod-wide security settings; a container's own securityContext wins over each. */
export class PodSecurityContext {
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(2147483647)
  runAsUser?: number;

  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(2147483647)
  runAsGroup?: number;

  @IsOptional()
  @IsBoolean()
  runAsNonRoot?: boolean;

  /** A group every container gets, which owns the pod's writable volumes (emptyDir) and their files. */
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(2147483647)
  fsGroup?: number;

  /** More groups for every container's first process. */
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(64)
  @IsInt({ each: true })
  @Min(0, { each: true })
  @Max(2147483647, { each: true })
  supplementalGroups?: number[];

  @IsOptional()
  @IsArray()
  @ArrayMaxSize(100)
  @ValidateNested({ each: true })
  @Type(() => Sysctl)
  sysctls?: Sysctl[];

  @IsOptional()
  @ValidateNested()
  @Type(() => SeccompProfile)
  seccompProfile?: SeccompProfile;
}

/** A Secret in the pod's namespace, by name. */
export class LocalObjectReference {
  @IsDns1123Subdomain()
  name: string;
}

export class PodSpec {
  @IsArray()
  @ArrayMinSize(1, { message: 'containers must hold at least one container' })
  @ArrayMaxSize(MAX_CONTAINERS, { message: `containers must hold at most ${MAX_CONTAINERS} containers` })
  @ValidateNested({ each: true })
  @Type(() => Container)
  containers: Container[];

  /**
   * Run in order, each to success, before the containers start, in the pod's sandbox. One with
   * `restartPolicy: Always` is a sidecar: started in order, then kept running beside the containers.
   */
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_CONTAINERS, { message: `initContainers must hold at most ${MAX_CONTAINERS} containers` })
  @ValidateNested({ each: true })
  @Type(() => Container)
  initContainers?: Container[];

  /**
   * Containers added to the running pod to debug it, through the `ephemeralcontainers`
   * subresource only (never on create, never changed or removed once added).
   */
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_CONTAINERS, { message: `ephemeralContainers must hold at most ${MAX_CONTAINERS} containers` })
  @ValidateNested({ each: true })
  @Type(() => EphemeralContainer)
  ephemeralContainers?: EphemeralContainer[];

  /** Defaults to Always. */
  @IsOptional()
  @IsIn(RESTART_POLICIES)
  restartPolicy?: RestartPolicy;

  /** Node labels the pod's node must carry. */
  @IsOptional()
  @IsLabelMap()
  nodeSelector?: Record<string, string>;

  /** Taints of nodes the pod may be scheduled onto (and stay on) despite them. */
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(100)
  @ValidateNested({ each: true })
  @Type(() => Toleration)
  tolerations?: Toleration[];

  /** The node the pod runs on: set by the scheduler, or by the user to bypass it. */
  @IsOptional()
  @IsDns1123Subdomain()
  nodeName?: string;

  /** Seconds between SIGTERM and SIGKILL on deletion; defaults to 30. */
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(MAX_TIMER_SECONDS)
  terminationGracePeriodSeconds?: number;

  /** How containers resolve names; defaults to ClusterFirst (see DNS_POLICIES). */
  @IsOptional()
  @IsIn(DNS_POLICIES)
  dnsPolicy?: DNSPolicy;

  /** Service environment variables; jetlet has no services, so either value injects nothing. Defaults to true. */
  @IsOptional()
  @IsBoolean()
  enableServiceLinks?: boolean;

  /** Which scheduler binds the pod; only jetlet's own, `default-scheduler` (the default). */
  @IsOptional()
  @IsIn([DEFAULT_SCHEDULER_NAME])
  schedulerName?: string;

  /** Pod-level security settings. */
  @IsOptional()
  @ValidateNested()
  @Type(() => PodSecurityContext)
  securityContext?: PodSecurityContext;

  /** Directories the pod's containers share, each from one source. */
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(100)
  @ValidateNested({ each: true })
  @Type(() => Volume)
  volumes?: Volume[];

  /** `kubernetes.io/dockerconfigjson` (or `dockercfg`) Secrets whose credentials pull the pod's images. */
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(100)
  @ValidateNested({ each: true })
  @Type(() => LocalObjectReference)
  imagePullSecrets?: LocalObjectReference[];

  /** The pod's service account; jetlet has no service accounts beyond `default` and mounts no token. */
  @IsOptional()
  @IsIn(['default'])
  serviceAccountName?: string;

  /** Deprecated alias of serviceAccountName, still filled in by Kubernetes. */
  @IsOptional()
  @IsIn(['default'])
  serviceAccount?: string;

  /** Scheduling priority; jetlet has no priority classes, so only 0 (the default). */
  @IsOptional()
  @IsIn([0])
  priority?: number;

  /** Whether the pod may preempt others; jetlet never preempts, so both values mean the same. */
  @IsOptional()
  @IsIn(['PreemptLowerPriority', 'Never'])
  preemptionPolicy?: 'PreemptLowerPriority' | 'Never';
}
