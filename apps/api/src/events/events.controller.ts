import { Controller, Get, Param, Query } from '@nestjs/common';
import type { KubeEvent } from '#domain';
import { ProjectionService } from '../projection/projection.service.js';

interface EventList {
  kind: 'EventList';
  apiVersion: 'v1';
  metadata: { resourceVersion: string };
  items: KubeEvent[];
}

/** Kubernetes core/v1 events about pods, recorded by the agents. Read-only. */
@Controller('api/v1')
export class EventsController {
  constructor(private readonly projection: ProjectionService) {}

  @Get('events')
  listAll(@Query('fieldSelector') fieldSelector?: string): EventList {
    return this.toList(this.projection.events.list(undefined, fieldSelector));
  }

  @Get('namespaces/:namespace/events')
  list(@Param('namespace') namespace: string, @Query('fieldSelector') fieldSelector?: string): EventList {
    return this.toList(this.projection.events.list(namespace, fieldSelector));
  }

  private toList(items: KubeEvent[]): EventList {
    const last = items.at(-1)?.metadata.resourceVersion ?? '0';
    return { kind: 'EventList', apiVersion: 'v1', metadata: { resourceVersion: last }, items };
  }
}
