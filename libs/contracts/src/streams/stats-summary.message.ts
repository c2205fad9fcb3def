import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, IsUUID, Min, ValidateNested } from '../class-validator.js';

/**
 * The kubelet's Summary API (stats/v1alpha1), the part jetlet fills: what the agent answers on
 * `SUBJECTS.statsRequests(node)` (core NATS request/reply) and serves at `/stats/summary`.
 * Writer: the agent of the node.
 */
export class CpuStats {
  /** RFC 3339 time of the later of the two samples the rate is taken from. */
  @IsString()
  time: string;

  /** CPU in use, in billionths of a core, averaged between the two samples; absent until there are two. */
  @IsOptional()
  @IsInt()
  @Min(0)
  usageNanoCores?: number;

  /** CPU time used since start, in nanoseconds. */
  @IsInt()
  @Min(0)
  usageCoreNanoSeconds: number;
}

export class MemoryStats {
  @IsString()
  time: string;

  /** Memory that cannot be reclaimed (usage − inactive file cache), bytes: what `kubectl top` shows. */
  @IsInt()
  @Min(0)
  workingSetBytes: number;

  @IsInt()
  @Min(0)
  usageBytes: number;
}

export class ContainerStatsSummary {
  @IsString()
  name: string;

  @ValidateNested()
  @Type(() => CpuStats)
  cpu: CpuStats;

  @ValidateNested()
  @Type(() => MemoryStats)
  memory: MemoryStats;
}

export class PodReference {
  @IsString()
  name: string;

  @IsString()
  namespace: string;

  @IsUUID()
  uid: string;
}

export class PodStatsSummary {
  @ValidateNested()
  @Type(() => PodReference)
  podRef: PodReference;

  @ValidateNested({ each: true })
  @Type(() => ContainerStatsSummary)
  containers: ContainerStatsSummary[];
}

export class NodeStatsSummary {
  @IsString()
  nodeName: string;

  @ValidateNested()
  @Type(() => CpuStats)
  cpu: CpuStats;

  @ValidateNested()
  @Type(() => MemoryStats)
  memory: MemoryStats;
}

export class StatsSummary {
  @ValidateNested()
  @Type(() => NodeStatsSummary)
  node: NodeStatsSummary;

  @ValidateNested({ each: true })
  @Type(() => PodStatsSummary)
  pods: PodStatsSummary[];
}
