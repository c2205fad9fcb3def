import { IsIn, IsInt, IsOptional, IsString, Max, MaxLength, Min, MinLength, ValidateBy, ValidateIf, type ValidationArguments } from '../class-validator.js';
import { MAX_TIMER_SECONDS } from '../limits.js';
import { IsQualifiedName } from '../names.js';

export const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'] as const;
/** What a taint does to pods that do not tolerate it (Kubernetes core/v1 TaintEffect). */
export type TaintEffect = (typeof TAINT_EFFECTS)[number];

export const TOLERATION_OPERATORS = ['Equal', 'Exists'] as const;
export type TolerationOperator = (typeof TOLERATION_OPERATORS)[number];

const tolerationOf = (args?: ValidationArguments): Partial<Toleration> => args?.object ?? {};

/**
 * A pod's toleration of node taints (Kubernetes core/v1 Toleration). It tolerates a taint
 * when effect (if set) and key (if set) match and, for Equal, the values are equal.
 */
export class Toleration {
  /** The taint key it matches; empty (with operator Exists) matches every key. Writer: the user. */
  // Validated whenever Kubernetes requires it: an empty key is allowed only with Exists.
  @ValidateIf((t: Toleration) => t.operator !== 'Exists' || (t.key !== undefined && t.key !== ''))
  @IsString({ message: 'key must be a string' })
  @MinLength(1, { message: 'key must be set unless operator is Exists' })
  @IsQualifiedName()
  key?: string;

  /** Equal (the default) compares value with the taint's; Exists matches any value. */
  @IsOptional()
  @IsIn(TOLERATION_OPERATORS)
  operator?: TolerationOperator;

  /** The taint value to match with Equal; must be empty with Exists. */
  @IsOptional()
  @IsString()
  @MaxLength(63)
  @ValidateBy({
    name: 'emptyWithExists',
    validator: {
      validate: (value: unknown, args) => tolerationOf(args).operator !== 'Exists' || value === '',
      defaultMessage: () => 'value must be empty when operator is Exists',
    },
  })
  value?: string;

  /** The taint effect it matches; empty matches every effect. */
  @IsOptional()
  @IsIn(TAINT_EFFECTS)
  effect?: TaintEffect;

  /**
   * Seconds the pod stays bound after a matching NoExecute taint appears (then it is evicted);
   * unset means forever. Only with effect NoExecute.
   */
  @IsOptional()
  @IsInt()
  @Min(-MAX_TIMER_SECONDS)
  @Max(MAX_TIMER_SECONDS)
  @ValidateBy({
    name: 'onlyWithNoExecute',
    validator: {
      validate: (_value: unknown, args) => tolerationOf(args).effect === 'NoExecute',
      defaultMessage: () => "effect must be 'NoExecute' when tolerationSeconds is set",
    },
  })
  tolerationSeconds?: number;
}
