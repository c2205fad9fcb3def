import { availableParallelism, hostname } from 'node:os';
import { IsIn, IsInt, IsIP, IsNumber, IsOptional, IsString, IsUrl, Matches, Max, Min } from '#contracts/class-validator';
import { BusConfig, DNS1123_SUBDOMAIN } from '#contracts';
import { DEFAULT_EVICTION_HARD, EVICTION_GRACE_FORMAT, EVICTION_THRESHOLDS_FORMAT } from '#domain/eviction';
import { NODE_LABELS_FORMAT, RESERVED_FORMAT, TAINTS_FORMAT } from './node/node-conditions.js';

/** The agent's configuration, from environment variables of the same names. */
export class AgentConfig extends BusConfig {
  /** This node's name; defaults to the host name. */
  @Matches(DNS1123_SUBDOMAIN, { message: 'NODE_NAME must be a lowercase RFC 1123 subdomain' })
  NODE_NAME: string = hostname().toLowerCase();

  /** Port of the agent's HTTP server (/healthz, /metrics, /pods, /runningpods, /containerLogs); 0 picks a free one. */
  @IsInt()
  @Min(0)
  @Max(65535)
  AGENT_PORT: number = 10250;

  /** Address the HTTP server binds; loopback unless configured. */
  @IsIP()
  AGENT_ADDRESS: string = '127.0.0.1';

  /** Bearer token the HTTP server asks for on everything but /healthz; unset: /pods, /runningpods and /containerLogs answer nobody, /metrics anyone. */
  @IsOptional()
  @IsString()
  AGENT_TOKEN?: string = undefined;

  /**
   * The Pod Security Standard this node holds a pod to when its namespace (as the API recorded
   * it on the bus) has no `pod-security.kubernetes.io/enforce` label; the API's default.
   */
  @IsIn(['privileged', 'baseline', 'restricted'])
  POD_SECURITY_DEFAULT: 'privileged' | 'baseline' | 'restricted' = 'baseline';

  /** The node's InternalIP (a pod's hostIP); detected when unset. */
  @IsOptional()
  @IsIP()
  // Initialised so it is an own property: loadConfig reads only the variables the class instance has.
  NODE_IP?: string = undefined;

  @IsNumber()
  @Min(0.1)
  HEARTBEAT_SECONDS: number = 10;

  /** Period of the safety-net reconcile and relist. */
  @IsNumber()
  @Min(0.1)
  RESYNC_SECONDS: number = 10;

  /**
   * Longest a pass reuses the last list of the node's containers while Docker's event stream
   * is open and nothing changed since (0: every pass lists). The kubelet's evented PLEG: 300 s.
   */
  @IsNumber()
  @Min(0)
  PLEG_RELIST_SECONDS: number = 60;

  /** Image of every pod's sandbox container. */
  @IsString()
  POD_INFRA_IMAGE: string = 'jetlet/pause:1.0';

  /** Crash back-off: first delay and cap, seconds. */
  @IsNumber()
  @Min(0)
  BACKOFF_BASE_SECONDS: number = 10;

  @IsNumber()
  @Min(0)
  BACKOFF_CAP_SECONDS: number = 300;

  @IsInt()
  @Min(1)
  MAX_PODS: number = 110;

  /**
   * Container starts (a sandbox's run, a container's create and start) given to the engine at
   * once, oldest pod first; 0: no bound. Past about two per core Docker starts no more a
   * second, each start just waits longer (the kubelet's nearest is --serialize-image-pulls).
   */
  @IsInt()
  @Min(0)
  MAX_PARALLEL_CONTAINER_STARTS: number = 2 * availableParallelism();

  /** Extra node labels, `k=v,k2=v2` (the kubelet's --node-labels). */
  @Matches(NODE_LABELS_FORMAT, { message: 'NODE_LABELS must look like key=value,key2=value2' })
  NODE_LABELS: string = '';

  /** Resources kept for the system, `cpu=500m,memory=1Gi,ephemeral-storage=1Gi,pods=0` (the kubelet's --system-reserved). */
  @Matches(RESERVED_FORMAT, { message: 'SYSTEM_RESERVED must look like cpu=500m,memory=1Gi,ephemeral-storage=1Gi' })
  SYSTEM_RESERVED: string = '';

  /** Taints to register with, `key=value:Effect,...` (the kubelet's --register-with-taints). */
  @Matches(TAINTS_FORMAT, { message: 'REGISTER_WITH_TAINTS must look like key=value:NoSchedule,key2:NoExecute' })
  REGISTER_WITH_TAINTS: string = '';

  /** The full node status goes out when it changes and at least this often. */
  @IsNumber()
  @Min(1)
  NODE_STATUS_REPORT_SECONDS: number = 300;

  /** The agent's own files (termination message files of containers); bind-mount sources, so a host path. */
  @IsString()
  AGENT_ROOT_DIR: string = '/var/lib/jetlet';

  /** A directory of static pod manifests (YAML or JSON); unset = none. */
  @IsOptional()
  @IsString()
  STATIC_POD_PATH?: string;

  /** A URL serving one static pod manifest, polled; unset = none. */
  @IsOptional()
  @IsUrl({ require_tld: false, protocols: ['http', 'https'] })
  MANIFEST_URL?: string;

  @IsNumber()
  @Min(0.1)
  FILE_CHECK_FREQUENCY_SECONDS: number = 20;

  @IsNumber()
  @Min(0.1)
  HTTP_CHECK_FREQUENCY_SECONDS: number = 20;

  /**
   * Hard eviction thresholds (the kubelet's --eviction-hard): `signal<quantity` or `signal<percent%`,
   * comma-separated, for memory.available, nodefs.available, nodefs.inodesFree, imagefs.available,
   * pid.available. Crossing one evicts at once. `''` turns them off.
   */
  @Matches(EVICTION_THRESHOLDS_FORMAT, { message: 'EVICTION_HARD must look like memory.available<100Mi,nodefs.available<10%' })
  EVICTION_HARD: string = DEFAULT_EVICTION_HARD;

  /** Soft eviction thresholds (--eviction-soft), same syntax; each needs a grace period in EVICTION_SOFT_GRACE_PERIOD. */
  @Matches(EVICTION_THRESHOLDS_FORMAT, { message: 'EVICTION_SOFT must look like memory.available<500Mi,nodefs.available<15%' })
  EVICTION_SOFT: string = '';

  /** How long a soft threshold must hold before pods are evicted, `memory.available=1m30s,...` (--eviction-soft-grace-period). */
  @Matches(EVICTION_GRACE_FORMAT, { message: 'EVICTION_SOFT_GRACE_PERIOD must look like memory.available=1m30s,nodefs.available=90s' })
  EVICTION_SOFT_GRACE_PERIOD: string = '';

  /** Grace of a pod evicted for a soft threshold, at most; 0: the pod's own (--eviction-max-pod-grace-period). */
  @IsInt()
  @Min(0)
  EVICTION_MAX_POD_GRACE_PERIOD_SECONDS: number = 0;

  /** How long a pressure condition stays True after its threshold was last crossed (--eviction-pressure-transition-period). */
  @IsNumber()
  @Min(0)
  EVICTION_PRESSURE_TRANSITION_PERIOD_SECONDS: number = 300;

  /** How often the eviction manager reads the signals (the kubelet's housekeeping interval). */
  @IsNumber()
  @Min(0.1)
  EVICTION_MONITORING_INTERVAL_SECONDS: number = 10;

  /**
   * Image filesystem usage (percent) at or above which unused images are removed, least recently
   * used first (--image-gc-high-threshold); 100 turns image garbage collection off, also before
   * a disk eviction.
   */
  @IsInt()
  @Min(0)
  @Max(100)
  IMAGE_GC_HIGH_THRESHOLD_PERCENT: number = 85;

  /** Usage image garbage collection brings the image filesystem down to (--image-gc-low-threshold). */
  @IsInt()
  @Min(0)
  @Max(100)
  IMAGE_GC_LOW_THRESHOLD_PERCENT: number = 80;

  /** An image first seen less than this ago is never collected (--minimum-image-ttl-duration). */
  @IsNumber()
  @Min(0)
  IMAGE_MINIMUM_GC_AGE_SECONDS: number = 120;

  /** How often image garbage collection looks (the kubelet's ImageGCPeriod). */
  @IsNumber()
  @Min(1)
  IMAGE_GC_PERIOD_SECONDS: number = 300;

  /** The file system of the runtime's images and writable layers, read for imagefs.available (Docker's root dir). */
  @IsString()
  IMAGEFS_PATH: string = '/var/lib/docker';

  /** The container runtime: the Docker engine, or `fake` (in memory, no containers: a hollow node). */
  @IsIn(['docker', 'fake'])
  RUNTIME: 'docker' | 'fake' = 'docker';
}
