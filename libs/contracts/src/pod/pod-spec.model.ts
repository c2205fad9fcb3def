import { Type } from 'class-transformer';
import { ArrayMinSize, IsArray, IsIn, IsInt, IsObject, IsOptional, IsString, Min, ValidateNested } from 'class-validator';
import { Container } from './container.model.js';
import { Toleration } from './toleration.model.js';

export const RESTART_POLICIES = ['Always', 'OnFailure', 'Never'] as const;
export type RestartPolicy = (typeof RESTART_POLICIES)[number];

export class PodSpec {
  @IsArray()
  @ArrayMinSize(1, { message: 'containers must hold at least one container' })
  @ValidateNested({ each: true })
  @Type(() => Container)
  containers: Container[];

  /** Defaults to Always. */
  @IsOptional()
  @IsIn(RESTART_POLICIES)
  restartPolicy?: RestartPolicy;

  /** Node labels the pod's node must carry. */
  @IsOptional()
  @IsObject()
  nodeSelector?: Record<string, string>;

  /** Taints of nodes the pod may be scheduled onto (and stay on) despite them. */
  @IsOptional()
  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => Toleration)
  tolerations?: Toleration[];

  /** The node the pod runs on: set by the scheduler, or by the user to bypass it. */
  @IsOptional()
  @IsString()
  nodeName?: string;

  /** Seconds between SIGTERM and SIGKILL on deletion; defaults to 30. */
  @IsOptional()
  @IsInt()
  @Min(0)
  terminationGracePeriodSeconds?: number;
}
