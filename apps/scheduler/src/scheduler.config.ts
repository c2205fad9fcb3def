import { IsIn, IsInt, IsIP, IsNumber, Max, Min } from '#contracts/class-validator';
import { BusConfig } from '#contracts';

/** The scheduler's configuration, from environment variables of the same names. */
export class SchedulerConfig extends BusConfig {
  /** A node without a heartbeat for this long is not Ready. */
  @IsNumber()
  @Min(1)
  NODE_GRACE_SECONDS: number = 40;

  /** How long pods tolerate an unreachable node before eviction, unless their own toleration says otherwise. */
  @IsNumber()
  @Min(0)
  EVICTION_TOLERATION_SECONDS: number = 300;

  /** How long a pod that is gone keeps its facts in the pods stream before they are purged. */
  @IsNumber()
  @Min(0)
  HISTORY_RETENTION_SECONDS: number = 60;

  /** Period of the safety-net scheduling pass (node readiness changes with time, not only with messages). */
  @IsNumber()
  @Min(0.1)
  RESYNC_SECONDS: number = 5;

  /**
   * kube-scheduler's `percentageOfNodesToScore`: with more than 100 nodes, the search for a
   * pod's node stops once this share of them is found feasible (never fewer than 100), and the
   * next pod's search goes on from there. 0 is kube-scheduler's adaptive default (50 % less
   * one point per 125 nodes, at least 5 %); 100 filters and scores every node.
   */
  @IsInt()
  @Min(0)
  @Max(100)
  PERCENTAGE_OF_NODES_TO_SCORE: number = 0;

  /** Bindings written at once in a pass, each awaiting its own acknowledgements (the pipeline's bound). */
  @IsInt()
  @Min(1)
  @Max(10_000)
  BINDS_IN_FLIGHT: number = 256;

  /** Port of the scheduler's /metrics and /healthz (kube-scheduler's old insecure port); 0 picks a free one. */
  @IsInt()
  @Min(0)
  @Max(65535)
  METRICS_PORT: number = 10251;

  /** Loopback unless configured. */
  @IsIP()
  METRICS_ADDRESS: string = '127.0.0.1';

  /**
   * kube-scheduler's `--leader-elect`: of the schedulers running, the one holding the
   * `kube-scheduler` lease schedules and the others wait to take over. `false` lets every
   * scheduler schedule at once (each pod is still bound once, but two may fill a node's last room).
   */
  @IsIn(['true', 'false'])
  LEADER_ELECT: string = 'true';

  /** How long the others wait, after they saw the lease change, before they may take it (`--leader-elect-lease-duration`). */
  @IsInt()
  @Min(2)
  @Max(3600)
  LEADER_ELECT_LEASE_DURATION_SECONDS: number = 15;

  /** How long the leader leads without a renewal that was stored (`--leader-elect-renew-deadline`); below the lease duration. */
  @IsNumber()
  @Min(0.2)
  LEADER_ELECT_RENEW_DEADLINE_SECONDS: number = 10;

  /** How often the leader renews and the others try (`--leader-elect-retry-period`); below the renew deadline. */
  @IsNumber()
  @Min(0.1)
  LEADER_ELECT_RETRY_PERIOD_SECONDS: number = 2;
}
