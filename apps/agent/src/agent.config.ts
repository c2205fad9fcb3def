import { hostname } from 'node:os';
import { IsIn, IsInt, IsIP, IsNumber, IsOptional, IsString, Matches, Max, Min } from 'class-validator';
import { DNS1123_SUBDOMAIN } from '#contracts';

/** The agent's configuration, from environment variables of the same names. */
export class AgentConfig {
  /** This node's name; defaults to the host name. */
  @Matches(DNS1123_SUBDOMAIN, { message: 'NODE_NAME must be a lowercase RFC 1123 subdomain' })
  NODE_NAME: string = hostname().toLowerCase();

  @IsString()
  NATS_URL: string = 'nats://127.0.0.1:4222';

  /** Port of the agent's HTTP server (/healthz, /metrics); 0 picks a free one. */
  @IsInt()
  @Min(0)
  @Max(65535)
  AGENT_PORT: number = 10250;

  /** Address the HTTP server binds; loopback unless configured. */
  @IsIP()
  AGENT_ADDRESS: string = '127.0.0.1';

  /** The node's InternalIP (a pod's hostIP); detected when unset. */
  @IsOptional()
  @IsIP()
  NODE_IP?: string;

  @IsNumber()
  @Min(0.1)
  HEARTBEAT_SECONDS: number = 10;

  /** Period of the safety-net reconcile and relist. */
  @IsNumber()
  @Min(0.1)
  RESYNC_SECONDS: number = 10;

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

  @IsIn(['docker'])
  RUNTIME: string = 'docker';
}
