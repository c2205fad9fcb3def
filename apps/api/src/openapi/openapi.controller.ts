import { createHash } from 'node:crypto';
import { Controller, Get, Headers, Param, Res } from '@nestjs/common';
import type { Response } from 'express';
import { KubeStatusException } from '../errors/kube-status.exception.js';
import { GROUP_VERSIONS, openApiV2, openApiV3 } from './openapi.documents.js';

interface Document {
  body: string;
  hash: string;
}

function document(value: object): Document {
  const body = JSON.stringify(value);
  return { body, hash: createHash('sha512').update(body).digest('hex').slice(0, 128).toUpperCase() };
}

/**
 * The OpenAPI documents kubectl reads to validate manifests, compute apply patches and
 * `explain` fields: v2 as JSON (not the protobuf form; a client asking only for that gets 406
 * and falls back), v3 as the root index and one document per group's version.
 */
@Controller('openapi')
export class OpenApiController {
  private v2?: Document;
  private readonly v3 = new Map<string, Document>();

  @Get('v2')
  getV2(@Headers('accept') accept: string | undefined, @Res() response: Response): void {
    if (accept && !/application\/json|\*\/\*/.test(accept)) {
      throw new KubeStatusException(406, 'NotAcceptable', `only the following media types are accepted: application/json`);
    }
    this.v2 ??= document(openApiV2());
    this.send(response, this.v2);
  }

  @Get('v3')
  root(): object {
    return { paths: Object.fromEntries(GROUP_VERSIONS.map((gv) => [gv, { serverRelativeURL: `/openapi/v3/${gv}?hash=${this.v3Document(gv).hash}` }])) };
  }

  @Get('v3/api/v1')
  coreV1(@Res() response: Response): void {
    this.send(response, this.v3Document('api/v1'));
  }

  @Get('v3/apis/:group/v1')
  groupV1(@Param('group') group: string, @Res() response: Response): void {
    const groupVersion = `apis/${group}/v1`;
    if (!GROUP_VERSIONS.includes(groupVersion)) throw new KubeStatusException(404, 'NotFound', `the server could not find the requested resource`);
    this.send(response, this.v3Document(groupVersion));
  }

  private v3Document(groupVersion: string): Document {
    let doc = this.v3.get(groupVersion);
    if (!doc) this.v3.set(groupVersion, (doc = document(openApiV3(groupVersion))));
    return doc;
  }

  private send(response: Response, doc: Document): void {
    response.status(200).type('application/json').setHeader('etag', `"${doc.hash}"`).send(doc.body);
  }
}
