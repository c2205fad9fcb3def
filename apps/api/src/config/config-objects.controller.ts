import { Body, Controller, Delete, Get, Headers, HttpCode, Param, Patch, Post, Put, Query } from '@nestjs/common';
import { CONFIG_PATCH_META, CONFIGMAP_SELECTABLE_FIELDS, configFields, SECRET_SELECTABLE_FIELDS, type ConfigObject } from '#domain';
import { KubeStatusException } from '../errors/kube-status.exception.js';
import { decodeConfigObject, ProtobufDecodeError } from '../namespaces/namespace-protobuf.js';
import { applyPatchBody, patchType } from '../patch/patch-body.js';
import { parseDryRun } from '../options/dry-run.js';
import { parseListOptions, selected } from '../options/list-options.js';
import { ConfigObjectsService, type ConfigKind } from './config-objects.service.js';

type Query = Record<string, unknown>;

/** kubectl's typed client posts protobuf (`kubectl create configmap|secret`); everything else JSON. */
function decoded(body: unknown, kind: ConfigKind): unknown {
  if (!Buffer.isBuffer(body)) return body;
  try {
    return decodeConfigObject(body, kind);
  } catch (error) {
    if (error instanceof ProtobufDecodeError) throw KubeStatusException.badRequest(`the protobuf body could not be decoded: ${error.message}`);
    throw error;
  }
}

/** Kubernetes core/v1 configmaps and secrets: the same verbs, one service. */
@Controller('api/v1')
export class ConfigObjectsController {
  constructor(private readonly objects: ConfigObjectsService) {}

  private list(kind: ConfigKind, namespace: string | undefined, query: Query): object {
    const options = parseListOptions(query, kind === 'ConfigMap' ? CONFIGMAP_SELECTABLE_FIELDS : SECRET_SELECTABLE_FIELDS);
    const { items, resourceVersion } = this.objects.list(kind, namespace);
    const chosen = items.filter((o) => selected(options, o.metadata.labels, () => configFields(o)));
    return { kind: `${kind}List`, apiVersion: 'v1', metadata: { resourceVersion }, items: chosen };
  }

  private patch(kind: ConfigKind, namespace: string, name: string, contentType: string | undefined, body: unknown, query: Query): Promise<ConfigObject> {
    const dryRun = parseDryRun('PatchOptions', query);
    const type = patchType(contentType);
    return this.objects.update(kind, namespace, name, (current) => applyPatchBody(current, type, body, CONFIG_PATCH_META), dryRun);
  }

  @Get('configmaps')
  listConfigMapsAll(@Query() query: Query): object {
    return this.list('ConfigMap', undefined, query);
  }

  @Get('namespaces/:namespace/configmaps')
  listConfigMaps(@Param('namespace') namespace: string, @Query() query: Query): object {
    return this.list('ConfigMap', namespace, query);
  }

  @Post('namespaces/:namespace/configmaps')
  @HttpCode(201)
  createConfigMap(@Param('namespace') namespace: string, @Body() body: unknown, @Query() query: Query): Promise<ConfigObject> {
    return this.objects.create('ConfigMap', namespace, decoded(body, 'ConfigMap'), parseDryRun('CreateOptions', query));
  }

  @Get('namespaces/:namespace/configmaps/:name')
  getConfigMap(@Param('namespace') namespace: string, @Param('name') name: string): ConfigObject {
    return this.objects.get('ConfigMap', namespace, name);
  }

  @Put('namespaces/:namespace/configmaps/:name')
  replaceConfigMap(@Param('namespace') namespace: string, @Param('name') name: string, @Body() body: unknown, @Query() query: Query): Promise<ConfigObject> {
    return this.objects.update('ConfigMap', namespace, name, () => decoded(body, 'ConfigMap'), parseDryRun('UpdateOptions', query));
  }

  @Patch('namespaces/:namespace/configmaps/:name')
  patchConfigMap(
    @Param('namespace') namespace: string,
    @Param('name') name: string,
    @Headers('content-type') contentType: string | undefined,
    @Body() body: unknown,
    @Query() query: Query,
  ): Promise<ConfigObject> {
    return this.patch('ConfigMap', namespace, name, contentType, body, query);
  }

  @Delete('namespaces/:namespace/configmaps/:name')
  deleteConfigMap(@Param('namespace') namespace: string, @Param('name') name: string, @Body() body: unknown, @Query() query: Query): Promise<object> {
    return this.objects.delete('ConfigMap', namespace, name, parseDryRun('DeleteOptions', query, body));
  }

  @Get('secrets')
  listSecretsAll(@Query() query: Query): object {
    return this.list('Secret', undefined, query);
  }

  @Get('namespaces/:namespace/secrets')
  listSecrets(@Param('namespace') namespace: string, @Query() query: Query): object {
    return this.list('Secret', namespace, query);
  }

  @Post('namespaces/:namespace/secrets')
  @HttpCode(201)
  createSecret(@Param('namespace') namespace: string, @Body() body: unknown, @Query() query: Query): Promise<ConfigObject> {
    return this.objects.create('Secret', namespace, decoded(body, 'Secret'), parseDryRun('CreateOptions', query));
  }

  @Get('namespaces/:namespace/secrets/:name')
  getSecret(@Param('namespace') namespace: string, @Param('name') name: string): ConfigObject {
    return this.objects.get('Secret', namespace, name);
  }

  @Put('namespaces/:namespace/secrets/:name')
  replaceSecret(@Param('namespace') namespace: string, @Param('name') name: string, @Body() body: unknown, @Query() query: Query): Promise<ConfigObject> {
    return this.objects.update('Secret', namespace, name, () => decoded(body, 'Secret'), parseDryRun('UpdateOptions', query));
  }

  @Patch('namespaces/:namespace/secrets/:name')
  patchSecret(
    @Param('namespace') namespace: string,
    @Param('name') name: string,
    @Headers('content-type') contentType: string | undefined,
    @Body() body: unknown,
    @Query() query: Query,
  ): Promise<ConfigObject> {
    return this.patch('Secret', namespace, name, contentType, body, query);
  }

  @Delete('namespaces/:namespace/secrets/:name')
  deleteSecret(@Param('namespace') namespace: string, @Param('name') name: string, @Body() body: unknown, @Query() query: Query): Promise<object> {
    return this.objects.delete('Secret', namespace, name, parseDryRun('DeleteOptions', query, body));
  }
}
