import { Controller, Get, Param, Query } from '@nestjs/common';
import { ResourceMetricsService, type NodeMetrics, type PodMetrics } from './resource-metrics.service.js';

const selectorOf = (query: Record<string, unknown>): string | undefined => (typeof query['labelSelector'] === 'string' ? query['labelSelector'] : undefined);

/** `metrics.k8s.io/v1beta1`: what `kubectl top node` and `kubectl top pod` read. */
@Controller('apis/metrics.k8s.io/v1beta1')
export class ResourceMetricsController {
  constructor(private readonly metrics: ResourceMetricsService) {}

  @Get()
  resources(): object {
    return {
      kind: 'APIResourceList',
      apiVersion: 'v1',
      groupVersion: 'metrics.k8s.io/v1beta1',
      resources: [
        { name: 'nodes', singularName: '', namespaced: false, kind: 'NodeMetrics', verbs: ['get', 'list'] },
        { name: 'pods', singularName: '', namespaced: true, kind: 'PodMetrics', verbs: ['get', 'list'] },
      ],
    };
  }

  @Get('nodes')
  nodes(@Query() query: Record<string, unknown>): Promise<object> {
    return this.metrics.nodes(selectorOf(query));
  }

  @Get('nodes/:name')
  node(@Param('name') name: string): Promise<NodeMetrics> {
    return this.metrics.node(name);
  }

  @Get('pods')
  allPods(@Query() query: Record<string, unknown>): Promise<object> {
    return this.metrics.pods(undefined, selectorOf(query));
  }

  @Get('namespaces/:namespace/pods')
  pods(@Param('namespace') namespace: string, @Query() query: Record<string, unknown>): Promise<object> {
    return this.metrics.pods(namespace, selectorOf(query));
  }

  @Get('namespaces/:namespace/pods/:name')
  pod(@Param('namespace') namespace: string, @Param('name') name: string): Promise<PodMetrics> {
    return this.metrics.pod(namespace, name);
  }
}
