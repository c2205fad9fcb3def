import { Controller, Get, Inject, Param } from '@nestjs/common';
import { nodeView } from '#domain';
import { API_CONFIG } from '../api.constants.js';
import type { ApiConfig } from '../api.config.js';
import { KubeStatusException } from '../errors/kube-status.exception.js';
import { ProjectionService } from '../projection/projection.service.js';

/** Kubernetes core/v1 nodes, read-only: agents register them over the bus. */
@Controller('api/v1/nodes')
export class NodesController {
  constructor(
    @Inject(API_CONFIG) private readonly config: ApiConfig,
    private readonly projection: ProjectionService,
  ) {}

  @Get()
  list(): object {
    const now = Date.now();
    const nodes = this.projection.nodes.list();
    const items = nodes.map((n) => nodeView(n, now, this.config.NODE_GRACE_SECONDS * 1000));
    const resourceVersion = String(Math.max(0, ...nodes.map((n) => n.resourceVersion)));
    return { kind: 'NodeList', apiVersion: 'v1', metadata: { resourceVersion }, items };
  }

  @Get(':name')
  get(@Param('name') name: string): object {
    const record = this.projection.nodes.get(name);
    if (!record) throw KubeStatusException.notFound('nodes', name);
    return nodeView(record, Date.now(), this.config.NODE_GRACE_SECONDS * 1000);
  }
}
