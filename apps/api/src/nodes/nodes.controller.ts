import { Body, Controller, Get, Headers, Inject, Param, Patch, Query } from '@nestjs/common';
import { BUS, type Bus } from '#bus';
import { SUBJECTS } from '#contracts';
import { NODE_PATCH_META, nodeFields, nodeView, NODE_SELECTABLE_FIELDS } from '#domain';
import { API_CONFIG } from '../api.constants.js';
import type { ApiConfig } from '../api.config.js';
import { KubeStatusException } from '../errors/kube-status.exception.js';
import { ProjectionService } from '../projection/projection.service.js';
import { applyPatchBody, patchType } from '../patch/patch-body.js';
import { parseDryRun } from '../options/dry-run.js';
import { parseListOptions, selected } from '../options/list-options.js';

/** Kubernetes core/v1 nodes: agents register them over the bus; operators may cordon them. */
@Controller('api/v1/nodes')
export class NodesController {
  constructor(
    @Inject(API_CONFIG) private readonly config: ApiConfig,
    @Inject(BUS) private readonly bus: Bus,
    private readonly projection: ProjectionService,
  ) {}

  @Get()
  list(@Query() query: Record<string, unknown>): object {
    const options = parseListOptions(query, NODE_SELECTABLE_FIELDS);
    const now = Date.now();
    const nodes = this.projection.nodes.list();
    const items = nodes
      .map((n) => nodeView(n, now, this.config.NODE_GRACE_SECONDS * 1000))
      .filter((n) => selected(options, n.metadata.labels, () => nodeFields(n)));
    // The stream position, not the newest node's: a watch from it then misses nothing.
    const resourceVersion = String(this.projection.nodeChanges.lastSeq);
    return { kind: 'NodeList', apiVersion: 'v1', metadata: { resourceVersion }, items };
  }

  @Get(':name/status')
  status(@Param('name') name: string): object {
    return this.get(name);
  }

  @Get(':name')
  get(@Param('name') name: string): object {
    const record = this.projection.nodes.get(name);
    if (!record) throw KubeStatusException.notFound('nodes', name);
    return nodeView(record, Date.now(), this.config.NODE_GRACE_SECONDS * 1000);
  }

  /**
   * Cordon and uncordon, as `kubectl cordon` sends them: a patch (JSON, merge or strategic)
   * of `spec.unschedulable`. Everything else about a node is its agent's to say.
   */
  @Patch(':name')
  async patch(
    @Param('name') name: string,
    @Headers('content-type') contentType: string | undefined,
    @Body() body: unknown,
    @Query() query: Record<string, unknown>,
  ): Promise<object> {
    const dryRun = parseDryRun('PatchOptions', query);
    const record = this.projection.nodes.get(name);
    if (!record) throw KubeStatusException.notFound('nodes', name);
    const type = patchType(contentType);
    const current = nodeView(record, Date.now(), this.config.NODE_GRACE_SECONDS * 1000);
    const patched = applyPatchBody(current, type, body, NODE_PATCH_META) as typeof current;
    const unschedulable = patched.spec?.unschedulable ?? false;
    const rest = (n: typeof current): string =>
      JSON.stringify({ ...n, spec: { ...n.spec, unschedulable: undefined }, metadata: { ...n.metadata, resourceVersion: undefined } });
    if (typeof unschedulable !== 'boolean' || rest(patched) !== rest(current)) {
      throw KubeStatusException.invalid('nodes', name, [
        {
          field: 'spec',
          reason: 'FieldValueForbidden',
          message: "Forbidden: only spec.unschedulable may be changed through the API; the rest is the node agent's",
        },
      ]);
    }
    KubeStatusException.checkResourceVersion('nodes', name, patched, current.metadata.resourceVersion);
    if (dryRun) return { ...current, spec: { ...current.spec, unschedulable } };
    if (unschedulable !== (current.spec.unschedulable ?? false)) {
      await this.bus.publish(SUBJECTS.nodeSpec(name), 'NodeSpecChanged', { nodeName: name, unschedulable }, { correlationId: name });
      // Read your write: the nodes projection follows the stream.
      const deadline = Date.now() + this.config.WRITE_TIMEOUT_SECONDS * 1000;
      while ((this.projection.nodes.get(name)?.node.spec.unschedulable ?? false) !== unschedulable && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }
    return this.get(name);
  }
}
