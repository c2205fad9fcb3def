import { readFileSync } from 'node:fs';
import { plainToInstance, Type } from 'class-transformer';
import { IsArray, IsIn, IsInt, IsObject, IsOptional, IsString, Matches, Min, MinLength, ValidateNested, validateSync } from '#contracts/class-validator';
import { parse } from 'yaml';
import { flattenValidationErrors } from '#contracts';
import { ALERT_CONDITIONS, NODE_PRESSURES, parseDuration, type AlertCondition, type AlertRule, type NodePressure } from '#domain';

const DURATION = /^(0|(\d+(\.\d+)?(ms|s|m|h|d))+)$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** One rule as written in the YAML file. */
export class AlertRuleSpec {
  /** The alert's name (label `alertname`). */
  @Matches(LABEL_NAME, { message: 'alert must be a Prometheus label value made of letters, digits and _' })
  alert: string;

  @IsIn(ALERT_CONDITIONS)
  condition: AlertCondition;

  @IsOptional()
  @IsString()
  @MinLength(1)
  severity?: string;

  /** How long the condition must hold before the alert fires (`0`, `30s`, `5m`). */
  @IsOptional()
  @Matches(DURATION, { message: 'for must be a duration such as 30s, 5m, 1h' })
  for?: string;

  /** CrashLoopBackOff: deaths within `window`. */
  @IsOptional()
  @IsInt()
  @Min(1)
  restarts?: number;

  @IsOptional()
  @Matches(DURATION, { message: 'window must be a duration such as 10m' })
  window?: string;

  /** OOMKilled: how long the container must run again after the kill to clear the alert. */
  @IsOptional()
  @Matches(DURATION, { message: 'clearAfter must be a duration such as 5m' })
  clearAfter?: string;

  /** NodePressure: MemoryPressure, DiskPressure or PIDPressure. */
  @IsOptional()
  @IsIn(NODE_PRESSURES)
  pressure?: NodePressure;

  @IsOptional()
  @IsObject()
  labels?: Record<string, string>;

  @IsOptional()
  @IsObject()
  annotations?: Record<string, string>;
}

export class AlertRulesFile {
  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => AlertRuleSpec)
  rules: AlertRuleSpec[];
}

/** Thrown at start with every bad field of the rules file. */
export class AlertRulesError extends Error {
  override readonly name = 'AlertRulesError';
}

const strings = (v: unknown): boolean => typeof v === 'object' && v !== null && Object.values(v).every((x) => typeof x === 'string');

/** Parses and validates a rules document; throws AlertRulesError naming every bad field. */
export function parseAlertRules(text: string, origin = 'rules'): AlertRule[] {
  let plain: unknown;
  try {
    plain = parse(text);
  } catch (error) {
    throw new AlertRulesError(`${origin}: not YAML: ${(error as Error).message}`, { cause: error });
  }
  const file = plainToInstance(AlertRulesFile, plain ?? {});
  const problems = flattenValidationErrors(validateSync(file)).map((c) => `${c.field}: ${c.message}`);
  (file.rules ?? []).forEach((r, i) => {
    if (r.labels && !strings(r.labels)) problems.push(`rules[${i}].labels: every value must be a string`);
    if (r.annotations && !strings(r.annotations)) problems.push(`rules[${i}].annotations: every value must be a string`);
    if (r.condition === 'NodePressure' && !r.pressure) problems.push(`rules[${i}].pressure: NodePressure needs MemoryPressure, DiskPressure or PIDPressure`);
  });
  if (problems.length > 0) throw new AlertRulesError(`${origin} is invalid:\n  ${problems.join('\n  ')}`);
  return file.rules.map((r) => ({
    alert: r.alert,
    condition: r.condition,
    severity: r.severity ?? 'warning',
    forMs: parseDuration(r.for ?? '0'),
    labels: r.labels ?? {},
    annotations: r.annotations ?? {},
    restarts: r.restarts ?? 3,
    windowMs: parseDuration(r.window ?? '10m'),
    clearAfterMs: parseDuration(r.clearAfter ?? '5m'),
    pressure: r.pressure ?? 'MemoryPressure',
  }));
}

/** Reads the rules file named by ALERT_RULES_FILE. */
export function loadAlertRules(path: string): AlertRule[] {
  return parseAlertRules(readFileSync(path, 'utf8'), path);
}
