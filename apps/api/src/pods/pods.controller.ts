import { Body, Controller, Delete, Get, Headers, HttpCode, Param, Patch, Post, Put, Query, Res } from '@nestjs/common';
import type { Response } from 'express';
import { MAX_TIMER_SECONDS, type Pod } from '#contracts';
import { podFields, POD_PATCH_META, POD_SELECTABLE_FIELDS } from '#domain';
import { KubeStatusException } from '../errors/kube-status.exception.js';
import { applyPatchBody, parseApplyConfiguration, patchType } from '../patch/patch-body.js';
import { parseFieldManagement } from '../options/field-manager.js';
import { parseDryRun } from '../options/dry-run.js';
import { parseListOptions, selected } from '../options/list-options.js';
import { PodsService } from './pods.service.js';

interface PodList {
  kind: 'PodList';
  apiVersion: 'v1';
  metadata: { resourceVersion: string };
  items: Pod[];
}

/** The grace period of a deletion, from the query or the DeleteOptions body: whole seconds a Node timer can wait. */
function parseGrace(query: unknown, body: unknown): number | undefined {
  const fromBody = typeof body === 'object' && body !== null ? (body as { gracePeriodSeconds?: unknown }).gracePeriodSeconds : undefined;
  const given = query ?? fromBody;
  const raw =
    given === undefined || given === null ? undefined : typeof given === 'number' || typeof given === 'string' ? String(given) : JSON.stringify(given);
  if (raw === undefined) return undefined;
  const grace = /^\d{1,16}$/.test(raw.trim()) || typeof given === 'number' ? Number(raw) : NaN;
  if (!Number.isInteger(grace) || grace < 0 || grace > MAX_TIMER_SECONDS) {
    const message = `must be a whole number of seconds from 0 to ${MAX_TIMER_SECONDS}`;
    throw new KubeStatusException(422, 'Invalid', `gracePeriodSeconds ${message}, got ${JSON.stringify(raw.slice(0, 40))}`, {
      causes: [{ reason: 'FieldValueInvalid', message, field: 'gracePeriodSeconds' }],
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
  create(
    @Param('namespace') namespace: string,
    @Body() body: unknown,
    @Query() query: Record<string, unknown>,
    @Headers('user-agent') userAgent: string | undefined,
  ): Promise<Pod> {
    const dryRun = parseDryRun('CreateOptions', query);
    return this.pods.create(namespace, body, dryRun, parseFieldManagement('CreateOptions', query, userAgent));
  }

  @Get('namespaces/:namespace/pods/:name')
  get(@Param('namespace') namespace: string, @Param('name') name: string): Pod {
    return this.pods.get(namespace, name);
  }

  @Put('namespaces/:namespace/pods/:name')
  replace(
    @Param('namespace') namespace: string,
    @Param('name') name: string,
    @Body() body: unknown,
    @Query() query: Record<string, unknown>,
    @Headers('user-agent') userAgent: string | undefined,
  ): Promise<Pod> {
    const dryRun = parseDryRun('UpdateOptions', query);
    return this.pods.update(namespace, name, () => body, dryRun, parseFieldManagement('UpdateOptions', query, userAgent));
  }

  /**
   * JSON patch, JSON merge patch and strategic merge patch (what kubectl sends), and
   * server-side apply, which creates the pod when there is none (201), as in Kubernetes.
   */
  @Patch('namespaces/:namespace/pods/:name')
  async patch(
    @Param('namespace') namespace: string,
    @Param('name') name: string,
    @Headers('content-type') contentType: string | undefined,
    @Headers('user-agent') userAgent: string | undefined,
    @Body() body: unknown,
    @Query() query: Record<string, unknown>,
    @Res({ passthrough: true }) response: Response,
  ): Promise<Pod> {
    const dryRun = parseDryRun('PatchOptions', query);
    const type = patchType(contentType, { apply: true });
    const management = parseFieldManagement('PatchOptions', query, userAgent, type === 'application/apply-patch+yaml');
    if (type === 'application/apply-patch+yaml') {
      const { pod, created } = await this.pods.apply(namespace, name, parseApplyConfiguration(body, 'v1', 'Pod'), management, dryRun);
      if (created) response.status(201);
      return pod;
    }
    return this.pods.update(namespace, name, (current) => applyPatchBody(current, type, body, POD_PATCH_META), dryRun, management);
  }

  @Delete('namespaces/:namespace/pods/:name')
  delete(
    @Param('namespace') namespace: string,
    @Param('name') name: string,
    @Query('gracePeriodSeconds') grace: unknown,
    @Body() body: unknown,
    @Query() query: Record<string, unknown>,
  ): Promise<Pod> {
    return this.pods.delete(namespace, name, parseGrace(grace, body), parseDryRun('DeleteOptions', query, body));
  }
}
