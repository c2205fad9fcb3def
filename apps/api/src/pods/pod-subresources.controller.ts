import { Body, Controller, Get, Headers, HttpCode, Param, Patch, Post, Put, Query } from '@nestjs/common';
import type { Pod } from '#contracts';
import { POD_PATCH_META } from '#domain';
import { KubeStatusException } from '../errors/kube-status.exception.js';
import { parseDryRun } from '../options/dry-run.js';
import { applyPatchBody, patchType } from '../patch/patch-body.js';
import { PodsService } from './pods.service.js';

interface Eviction {
  apiVersion?: unknown;
  kind?: unknown;
  metadata?: { name?: unknown; namespace?: unknown };
  deleteOptions?: { gracePeriodSeconds?: unknown; dryRun?: unknown };
}

/** The first top-level status field two statuses disagree on. */
function firstDifference(before: Record<string, unknown>, after: unknown): string | undefined {
  if (typeof after !== 'object' || after === null || Array.isArray(after)) return '';
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  return [...keys].find((k) => JSON.stringify(before[k]) !== JSON.stringify((after as Record<string, unknown>)[k]));
}

/** Pod subresources: `status` (read, and written only by the pod's node) and `eviction` (policy/v1). */
@Controller('api/v1/namespaces/:namespace/pods/:name')
export class PodSubresourcesController {
  constructor(private readonly pods: PodsService) {}

  @Get('status')
  status(@Param('namespace') namespace: string, @Param('name') name: string): Pod {
    return this.pods.get(namespace, name);
  }

  @Put('status')
  replaceStatus(@Param('namespace') namespace: string, @Param('name') name: string, @Body() body: unknown): Pod {
    return this.writeStatus(namespace, name, () => body);
  }

  @Patch('status')
  patchStatus(
    @Param('namespace') namespace: string,
    @Param('name') name: string,
    @Headers('content-type') contentType: string | undefined,
    @Body() body: unknown,
  ): Pod {
    const type = patchType(contentType);
    return this.writeStatus(namespace, name, (current) => applyPatchBody(current, type, body, POD_PATCH_META));
  }

  /** `kubectl debug` reads the pod here, then patches its ephemeral containers (strategic merge, as kubectl 1.32 sends it). */
  @Get('ephemeralcontainers')
  ephemeralContainers(@Param('namespace') namespace: string, @Param('name') name: string): Pod {
    return this.pods.get(namespace, name);
  }

  @Put('ephemeralcontainers')
  replaceEphemeralContainers(
    @Param('namespace') namespace: string,
    @Param('name') name: string,
    @Body() body: unknown,
    @Query() query: Record<string, unknown>,
  ): Promise<Pod> {
    return this.pods.updateEphemeralContainers(namespace, name, () => body, parseDryRun('UpdateOptions', query));
  }

  @Patch('ephemeralcontainers')
  patchEphemeralContainers(
    @Param('namespace') namespace: string,
    @Param('name') name: string,
    @Headers('content-type') contentType: string | undefined,
    @Body() body: unknown,
    @Query() query: Record<string, unknown>,
  ): Promise<Pod> {
    const type = patchType(contentType);
    return this.pods.updateEphemeralContainers(
      namespace,
      name,
      (current) => applyPatchBody(current, type, body, POD_PATCH_META),
      parseDryRun('PatchOptions', query),
    );
  }

  /**
   * As the API server's status strategy, a status write ignores spec and metadata. A pod's
   * status is what its node's agent reports to the log, so a write may only leave it as it is.
   */
  private writeStatus(namespace: string, name: string, change: (current: Pod) => unknown): Pod {
    const current = this.pods.get(namespace, name);
    const proposed = change(current) as { status?: unknown } | null;
    const field = firstDifference(current.status as unknown as Record<string, unknown>, proposed?.status ?? current.status);
    if (field !== undefined) {
      throw KubeStatusException.invalid('pods', name, [
        {
          field: field ? `status.${field}` : 'status',
          reason: 'FieldValueForbidden',
          message: `Forbidden: a pod's status is reported by the agent of its node`,
        },
      ]);
    }
    return current;
  }

  /**
   * policy/v1 Eviction, as `kubectl drain` posts it: jetlet has no PodDisruptionBudgets, so an
   * eviction is always allowed and is a graceful delete (the Eviction's deleteOptions grace, else
   * the pod's). Answers 201 with a Success Status, as the API server does.
   */
  @Post('eviction')
  @HttpCode(201)
  async evict(
    @Param('namespace') namespace: string,
    @Param('name') name: string,
    @Body() body: Eviction,
    @Query() query: Record<string, unknown>,
  ): Promise<object> {
    // kubectl drain --dry-run=server puts it in the Eviction's deleteOptions; the query works too.
    const dryRun = parseDryRun('CreateOptions', query) || parseDryRun('DeleteOptions', {}, body?.deleteOptions);
    const causes: Array<{ field: string; reason: 'FieldValueInvalid' | 'FieldValueNotSupported'; message: string }> = [];
    if (body?.apiVersion !== undefined && body.apiVersion !== 'policy/v1' && body.apiVersion !== 'policy/v1beta1')
      causes.push({
        field: 'apiVersion',
        reason: 'FieldValueNotSupported',
        message: `Unsupported value: ${JSON.stringify(body.apiVersion)}: supported values: "policy/v1"`,
      });
    if (body?.kind !== undefined && body.kind !== 'Eviction')
      causes.push({
        field: 'kind',
        reason: 'FieldValueNotSupported',
        message: `Unsupported value: ${JSON.stringify(body.kind)}: supported values: "Eviction"`,
      });
    const grace = body?.deleteOptions?.gracePeriodSeconds;
    if (grace !== undefined && grace !== null && !(typeof grace === 'number' && Number.isInteger(grace) && grace >= 0))
      causes.push({
        field: 'deleteOptions.gracePeriodSeconds',
        reason: 'FieldValueInvalid',
        message: `Invalid value: ${JSON.stringify(grace)}: must be a non-negative integer`,
      });
    if (causes.length > 0) {
      throw new KubeStatusException(422, 'Invalid', `Eviction.policy "${name}" is invalid: ${causes.map((c) => `${c.field}: ${c.message}`).join(', ')}`, {
        name,
        kind: 'Eviction',
        causes,
      });
    }
    const evictedName = body?.metadata?.name;
    if (evictedName !== undefined && evictedName !== name) throw KubeStatusException.badRequest('name in URL does not match name in Eviction object');
    const evictedNamespace = body?.metadata?.namespace;
    if (evictedNamespace !== undefined && evictedNamespace !== namespace)
      throw KubeStatusException.badRequest(
        `the namespace of the provided object (${JSON.stringify(evictedNamespace)}) does not match the namespace sent on the request (${namespace})`,
      );
    await this.pods.delete(namespace, name, typeof grace === 'number' ? grace : undefined, dryRun, true);
    return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 };
  }
}
