import { IsInt, IsIP, IsNumber, IsOptional, IsString, Max, Min } from '#contracts/class-validator';
import { BusConfig } from '#contracts';

/** The alerter's configuration, from environment variables of the same names. */
export class AlerterConfig extends BusConfig {
  /** Port of /metrics and /healthz; 0 picks a free one. */
  @IsInt()
  @Min(0)
  @Max(65535)
  ALERTER_PORT: number = 9097;

  /** Loopback unless configured. */
  @IsIP()
  ALERTER_ADDRESS: string = '127.0.0.1';

  /** The YAML file of alerting rules. */
  @IsString()
  ALERT_RULES_FILE: string = 'deploy/alerter/rules.yaml';

  /** Alertmanager base URLs, comma-separated (alerts go to `<url>/api/v2/alerts`); unset = none. */
  @IsOptional()
  @IsString()
  ALERTMANAGER_URL?: string = undefined;

  /** A URL that gets a JSON POST on every alert that starts or ends; unset = none. */
  @IsOptional()
  @IsString()
  WEBHOOK_URL?: string = undefined;

  /** Firing alerts are sent again this often, as Alertmanager's clients must; they expire after four times this. */
  @IsNumber()
  @Min(0.1)
  RESEND_SECONDS: number = 60;

  /** How often rules are evaluated (for `for:` durations and windows that end with time). */
  @IsNumber()
  @Min(0.05)
  EVALUATION_SECONDS: number = 5;

  /** Resolved alerts are sent (and kept) this long after they end. */
  @IsNumber()
  @Min(0)
  RESOLVED_RETENTION_SECONDS: number = 900;

  /** How far back container and node events are read at start: at least the longest rule window. */
  @IsNumber()
  @Min(1)
  LOOKBACK_SECONDS: number = 3600;

  /** Base of each alert's generatorURL: the API serving the pod's events and the node. */
  @IsString()
  GENERATOR_BASE_URL: string = 'http://127.0.0.1:8001';
}
