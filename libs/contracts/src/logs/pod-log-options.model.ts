import { IsBoolean, IsInt, IsOptional, Matches, Min } from '../class-validator.js';
import { DNS1123_LABEL } from '../pod/object-meta.model.js';
import { parseContract } from '../validation.js';

/**
 * Which log to read and how: Kubernetes' PodLogOptions, the fields jetlet serves. The query
 * of `GET .../pods/{name}/log` and of the agent's `/containerLogs`, and part of a LogRequest.
 */
export class PodLogOptions {
  /** The container's name in the pod spec; may be left out when the pod has one container. */
  @IsOptional()
  @Matches(DNS1123_LABEL, { message: 'must be a container name (an RFC 1123 label)' })
  container?: string;

  /** Keep streaming new output until the container stops or the client goes away. */
  @IsOptional()
  @IsBoolean()
  follow?: boolean;

  /** The previous run: the newest terminated attempt before the current one. */
  @IsOptional()
  @IsBoolean()
  previous?: boolean;

  /** Prefix every line with its RFC 3339 nanosecond time. */
  @IsOptional()
  @IsBoolean()
  timestamps?: boolean;

  /** Only the last N lines; all when absent. */
  @IsOptional()
  @IsInt({ message: 'must be an integer' })
  @Min(0, { message: 'must be greater than or equal to 0' })
  tailLines?: number;

  /** Only output of the last N seconds; all when absent. */
  @IsOptional()
  @IsInt({ message: 'must be an integer' })
  @Min(1, { message: 'must be greater than 0' })
  sinceSeconds?: number;
}

/** A query parameter that does not parse at all (Kubernetes answers 400 for these, 422 for values out of range). */
export class PodLogQueryError extends Error {
  override readonly name = 'PodLogQueryError';
}

const BOOLEANS = ['follow', 'previous', 'timestamps'] as const;
const INTEGERS = ['tailLines', 'sinceSeconds'] as const;

function first(value: unknown): string | undefined {
  const v = Array.isArray(value) ? (value as unknown[])[0] : value;
  return typeof v === 'string' ? v : undefined;
}

/**
 * Query parameters (as an HTTP framework hands them over) to validated PodLogOptions, with
 * Kubernetes' conversions: a boolean is false only when absent, "0" or "false" (so a bare
 * `?follow` is true), an integer must parse. Unknown parameters are ignored, as Kubernetes
 * does. Throws PodLogQueryError for what does not parse and ContractValidationError
 * (listing every field) for values out of range.
 */
export function parsePodLogQuery(query: Record<string, unknown>): PodLogOptions {
  const plain: Record<string, unknown> = {};
  const container = first(query['container']);
  if (container !== undefined && container !== '') plain['container'] = container;
  for (const key of BOOLEANS) {
    const raw = first(query[key]);
    if (raw !== undefined) plain[key] = !(raw === '0' || raw.toLowerCase() === 'false');
  }
  for (const key of INTEGERS) {
    const raw = first(query[key]);
    if (raw === undefined || raw === '') continue;
    if (!/^[+-]?\d+$/.test(raw)) throw new PodLogQueryError(`${key}: strconv.ParseInt: parsing ${JSON.stringify(raw)}: invalid syntax`);
    plain[key] = Number(raw);
  }
  return parseContract(PodLogOptions, plain, 'PodLogOptions');
}

/** The options back as query parameters (what jetctl and the API's tests send). */
export function podLogQueryString(options: PodLogOptions): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(options)) if (value !== undefined) params.set(key, String(value));
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}
