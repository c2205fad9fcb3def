import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsIn, IsInt, IsOptional, IsString, Max, Min, ValidateBy, ValidateNested } from '../class-validator.js';
import { INT32_MAX, MAX_TIMER_SECONDS } from '../limits.js';

/** A port given by number (1–65535) or by the name of one of the container's ports. */
export function IsPortNumberOrName(): PropertyDecorator {
  return ValidateBy({
    name: 'isPortNumberOrName',
    validator: {
      validate: (v: unknown) =>
        (typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= 65535) ||
        (typeof v === 'string' && /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(v) && v.length <= 15),
      defaultMessage: () => 'port must be a number between 1 and 65535 or a port name',
    },
  });
}

/** Runs a command inside the container; exit status 0 is success. */
export class ExecAction {
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(4096)
  @IsString({ each: true })
  command: string[];
}

export class HTTPHeader {
  @IsString()
  name: string;

  @IsString()
  value: string;
}

/** An HTTP GET to the pod IP; a status from 200 to 399 is success. */
export class HTTPGetAction {
  /** Defaults to "/". */
  @IsOptional()
  @IsString()
  path?: string;

  @IsPortNumberOrName()
  port: number | string;

  /** Defaults to the pod IP. */
  @IsOptional()
  @IsString()
  host?: string;

  /** Only HTTP is supported. */
  @IsOptional()
  @IsIn(['HTTP'])
  scheme?: 'HTTP';

  @IsOptional()
  @IsArray()
  @ArrayMaxSize(100)
  @ValidateNested({ each: true })
  @Type(() => HTTPHeader)
  httpHeaders?: HTTPHeader[];
}

/** A TCP connect to the pod IP; an open connection is success. */
export class TCPSocketAction {
  @IsPortNumberOrName()
  port: number | string;

  @IsOptional()
  @IsString()
  host?: string;
}

/** One of exec, httpGet or tcpSocket (checked by the pod validation). */
export class ProbeHandler {
  @IsOptional()
  @ValidateNested()
  @Type(() => ExecAction)
  exec?: ExecAction;

  @IsOptional()
  @ValidateNested()
  @Type(() => HTTPGetAction)
  httpGet?: HTTPGetAction;

  @IsOptional()
  @ValidateNested()
  @Type(() => TCPSocketAction)
  tcpSocket?: TCPSocketAction;
}

/** A container probe with Kubernetes' defaults: period 10 s, timeout 1 s, success 1, failure 3. */
export class Probe extends ProbeHandler {
  /** Seconds after the container started before the first probe; default 0. */
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(MAX_TIMER_SECONDS)
  initialDelaySeconds?: number;

  /** Seconds between probes; default 10. At most a Node timer's longest wait. */
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_TIMER_SECONDS)
  periodSeconds?: number;

  /** Seconds one probe may take; default 1. */
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_TIMER_SECONDS)
  timeoutSeconds?: number;

  /** Consecutive successes to count as succeeded; must be 1 for liveness and startup. */
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(INT32_MAX)
  successThreshold?: number;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(INT32_MAX)
  failureThreshold?: number;

  /** Overrides the pod's grace when this probe's failure kills the container. */
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(3600)
  terminationGracePeriodSeconds?: number;
}

/** postStart and preStop hooks. */
export class Lifecycle {
  @IsOptional()
  @ValidateNested()
  @Type(() => ProbeHandler)
  postStart?: ProbeHandler;

  @IsOptional()
  @ValidateNested()
  @Type(() => ProbeHandler)
  preStop?: ProbeHandler;
}
