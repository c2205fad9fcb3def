import { Controller, Get, Param, Query } from '@nestjs/common';
import { eventFields, EVENT_SELECTABLE_FIELDS, type KubeEvent } from '#domain';
import { ProjectionService } from '../projection/projection.service.js';
import { parseListOptions, selected } from '../options/list-options.js';

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
  listAll(@Query() query: Record<string, unknown>): EventList {
    return this.list(undefined, query);
  }

  @Get('namespaces/:namespace/events')
  listNamespaced(@Param('namespace') namespace: string, @Query() query: Record<string, unknown>): EventList {
    return this.list(namespace, query);
  }

  private list(namespace: string | undefined, query: Record<string, unknown>): EventList {
    const options = parseListOptions(query, EVENT_SELECTABLE_FIELDS);
    const all = this.projection.events.list(namespace);
    const items = all.filter((e) => selected(options, undefined, () => eventFields(e)));
    const resourceVersion = String(Math.max(this.projection.eventsSeq, Number(all.at(-1)?.metadata.resourceVersion ?? 0)));
    return { kind: 'EventList', apiVersion: 'v1', metadata: { resourceVersion }, items };
  }
}
