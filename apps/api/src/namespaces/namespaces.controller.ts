import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import type { NamespaceObject } from '#domain';
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
  list(): object {
    return { kind: 'NamespaceList', apiVersion: 'v1', metadata: { resourceVersion: String(this.projection.pods.lastSeq) }, items: this.namespaces.list() };
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
