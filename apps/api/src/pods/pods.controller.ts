import { Body, Controller, Delete, Get, Headers, HttpCode, Param, Patch, Post, Put, Query } from '@nestjs/common';
import type { Pod } from '#contracts';
import { podFields, POD_PATCH_META, POD_SELECTABLE_FIELDS } from '#domain';
import { KubeStatusException } from '../errors/kube-status.exception.js';
import { applyPatchBody, patchType } from '../patch/patch-body.js';
import { parseDryRun } from '../options/dry-run.js';
import { parseListOptions, selected } from '../options/list-options.js';
import { PodsService } from './pods.service.js';

interface PodList {
  kind: 'PodList';
  apiVersion: 'v1';
  metadata: { resourceVersion: string };
  items: Pod[];
}

function parseGrace(query: string | undefined, body: unknown): number | undefined {
  const fromBody = (body as { gracePeriodSeconds?: unknown } | undefined)?.gracePeriodSeconds;
  const raw =
    query ?? (typeof fromBody === 'number' || typeof fromBody === 'string' ? String(fromBody) : fromBody === undefined ? undefined : JSON.stringify(fromBody));
  if (raw === undefined) return undefined;
  const grace = Number(raw);
  if (!Number.isInteger(grace) || grace < 0) {
    throw new KubeStatusException(422, 'Invalid', `gracePeriodSeconds must be a non-negative integer, got "${raw}"`, {
      causes: [{ reason: 'FieldValueInvalid', message: 'must be a non-negative integer', field: 'gracePeriodSeconds' }],
    });
  }
  return grace;
}

/** Kubernetes core/v1 pods. */
@Controller('api/v1')
export class PodsController {
  constructor(private readonly pods: PodsService) {}

  @Get('pods')
  listAll(@Query() query: Record<string, unknown>): PodList {
    return this.list(undefined, query);
  }

  @Get('namespaces/:namespace/pods')
  listNamespaced(@Param('namespace') namespace: string, @Query() query: Record<string, unknown>): PodList {
    return this.list(namespace, query);
  }

  /** Only the pods both selectors choose: `kubectl delete pods -l app=x` must never reach another pod. */
  private list(namespace: string | undefined, query: Record<string, unknown>): PodList {
    const options = parseListOptions(query, POD_SELECTABLE_FIELDS);
    const { items, resourceVersion } = this.pods.list(namespace);
    const chosen = items.filter((pod) => selected(options, pod.metadata.labels, () => podFields(pod)));
    return { kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion }, items: chosen };
  }

  @Post('namespaces/:namespace/pods')
  @HttpCode(201)
  create(@Param('namespace') namespace: string, @Body() body: unknown, @Query() query: Record<string, unknown>): Promise<Pod> {
    return this.pods.create(namespace, body, parseDryRun('CreateOptions', query));
  }

  @Get('namespaces/:namespace/pods/:name')
  get(@Param('namespace') namespace: string, @Param('name') name: string): Pod {
    return this.pods.get(namespace, name);
  }

  @Put('namespaces/:namespace/pods/:name')
  replace(@Param('namespace') namespace: string, @Param('name') name: string, @Body() body: unknown, @Query() query: Record<string, unknown>): Promise<Pod> {
    return this.pods.update(namespace, name, () => body, parseDryRun('UpdateOptions', query));
  }

  /** JSON patch, JSON merge patch and strategic merge patch (what kubectl sends), as in Kubernetes. */
  @Patch('namespaces/:namespace/pods/:name')
  patch(
    @Param('namespace') namespace: string,
    @Param('name') name: string,
    @Headers('content-type') contentType: string | undefined,
    @Body() body: unknown,
    @Query() query: Record<string, unknown>,
  ): Promise<Pod> {
    const dryRun = parseDryRun('PatchOptions', query);
    const type = patchType(contentType);
    return this.pods.update(namespace, name, (current) => applyPatchBody(current, type, body, POD_PATCH_META), dryRun);
  }

  @Delete('namespaces/:namespace/pods/:name')
  delete(
    @Param('namespace') namespace: string,
    @Param('name') name: string,
    @Query('gracePeriodSeconds') grace: string | undefined,
    @Body() body: unknown,
    @Query() query: Record<string, unknown>,
  ): Promise<Pod> {
    return this.pods.delete(namespace, name, parseGrace(grace, body), parseDryRun('DeleteOptions', query, body));
  }
}
