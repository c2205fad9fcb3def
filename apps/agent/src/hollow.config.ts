import { IsIn, IsInt, IsIP, IsOptional, Matches, Max, Min } from '#contracts/class-validator';
import { DNS1123_SUBDOMAIN } from '#contracts';
import { FAKE_POD_BLOCKS } from '#runtime';

/** The hollow-node process's own configuration; every agent in it also reads AgentConfig from the same environment. */
export class HollowConfig {
  /** How many hollow agents this process runs. */
  @IsInt()
  @Min(1)
  @Max(1024)
  HOLLOW_NODES: number = 1;

  /** Node names are `${HOLLOW_PREFIX}-${i}`. */
  @Matches(DNS1123_SUBDOMAIN, { message: 'HOLLOW_PREFIX must be a lowercase RFC 1123 subdomain' })
  HOLLOW_PREFIX: string = 'hollow';

  /** The first `i`, so several processes can share a prefix (and the fake pod range, one /24 per i, FAKE_POD_BLOCKS of them). */
  @IsInt()
  @Min(0)
  @Max(FAKE_POD_BLOCKS - 1)
  HOLLOW_FIRST_INDEX: number = 0;

  /**
   * `shared`: every agent of the process rides one NATS connection (the process's identity);
   * `per-node`: each opens its own, as a real node does (costs a connection's buffers and
   * subscriptions per node; kept to measure against).
   */
  @IsIn(['shared', 'per-node'])
  HOLLOW_CONNECTIONS: 'shared' | 'per-node' = 'shared';

  /**
   * `packed`: each agent's modules packed into one (packModules), run as a Nest microservice
   * alone; `per-folder`: one module per folder in an HTTP application that never listens, as
   * hollow agents were made before (kept to measure against).
   */
  @IsIn(['packed', 'per-folder'])
  HOLLOW_MODULES: 'packed' | 'per-folder' = 'packed';

  /**
   * `shared`: the agents' metric families are made once, in the process's registry, each
   * node's series labelled `node`; `per-node`: a registry of every agent's own, as a node's
   * agent has (kept to measure against).
   */
  @IsIn(['shared', 'per-node'])
  HOLLOW_METRICS: 'shared' | 'per-node' = 'shared';

  /**
   * `released`: once an agent runs, what Nest kept only to resolve its providers (see
   * releaseBootstrapState) is let go; `kept`: left as Nest leaves it (kept to measure against).
   */
  @IsIn(['released', 'kept'])
  HOLLOW_BOOTSTRAP_STATE: 'released' | 'kept' = 'released';

  /**
   * `released`: once an agent runs, Nest's whole container (modules, provider wrappers,
   * injector, scanners) is let go, and the agent is closed through what `close()` needs of it
   * (see releaseContainer); `kept`: the application is kept as Nest made it. Only with
   * HOLLOW_MODULES=packed.
   */
  @IsIn(['released', 'kept'])
  HOLLOW_CONTAINER: 'released' | 'kept' = 'released';

  /**
   * How many times each agent is started before the process gives up on it (and stops): a
   * start whose bus requests time out (the consumer's creation, the registration's
   * acknowledgement) is closed and tried again after a back-off, as a kubelet retries.
   */
  @IsInt()
  @Min(1)
  @Max(100)
  HOLLOW_START_ATTEMPTS: number = 6;

  /** The process's `/metrics` (every hollow node's series, labelled `node`, beside the process's own) on this port; unset: not served. */
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(65535)
  HOLLOW_METRICS_PORT?: number;

  /** Loopback unless configured. */
  @IsIP()
  HOLLOW_METRICS_ADDRESS: string = '127.0.0.1';
}
