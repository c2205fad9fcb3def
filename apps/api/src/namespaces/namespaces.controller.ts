import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { NAMESPACE_SELECTABLE_FIELDS, namespaceFields, type NamespaceObject } from '#domain';
import { parseListOptions, selected } from '../options/list-options.js';
import { ProjectionService } from '../projection/projection.service.js';
import { KubeStatusException } from '../errors/kube-status.exception.js';
import { decodeNamespace, ProtobufDecodeError } from './namespace-protobuf.js';
import { NamespacesService } from './namespaces.service.js';

/** Kubernetes core/v1 namespaces. */
@Controller('api/v1/namespaces')
export class NamespacesController {
  constructor(
    private readonly namespaces: NamespacesService,
    private readonly projection: ProjectionService,
  ) {}

  @Get()
  list(@Query() query: Record<string, unknown>): object {
    const options = parseListOptions(query, NAMESPACE_SELECTABLE_FIELDS);
    const items = this.namespaces.list().filter((n) => selected(options, n.metadata.labels, () => namespaceFields(n)));
    return { kind: 'NamespaceList', apiVersion: 'v1', metadata: { resourceVersion: String(this.projection.podsSeq) }, items };
  }

  @Post()
  @HttpCode(201)
  create(@Body() body: unknown): Promise<NamespaceObject> {
    // kubectl create namespace sends protobuf; everything else JSON.
    if (Buffer.isBuffer(body)) {
      try {
        return this.namespaces.create(decodeNamespace(body));
      } catch (error) {
        if (error instanceof ProtobufDecodeError) throw KubeStatusException.badRequest(`the protobuf body could not be decoded: ${error.message}`);
        throw error;
      }
    }
    return this.namespaces.create(body);
  }

  @Get(':name')
  get(@Param('name') name: string): NamespaceObject {
    return this.namespaces.get(name);
  }

  @Get(':name/status')
  status(@Param('name') name: string): NamespaceObject {
    return this.namespaces.get(name);
  }

  /** Answers the namespace Terminating, as the API server does; it leaves once its pods are gone. */
  @Delete(':name')
  delete(@Param('name') name: string): Promise<NamespaceObject> {
    return this.namespaces.delete(name);
  }
}
