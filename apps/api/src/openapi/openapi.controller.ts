import { createHash } from 'node:crypto';
import { Controller, Get, Headers, Res } from '@nestjs/common';
import type { Response } from 'express';
import { KubeStatusException } from '../errors/kube-status.exception.js';
import { openApiV2, openApiV3CoreV1 } from './openapi.documents.js';

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
 * and falls back), v3 as the root index and the core/v1 group.
 */
@Controller('openapi')
export class OpenApiController {
  private v2?: Document;
  private v3?: Document;

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
    this.v3 ??= document(openApiV3CoreV1());
    return { paths: { 'api/v1': { serverRelativeURL: `/openapi/v3/api/v1?hash=${this.v3.hash}` } } };
  }

  @Get('v3/api/v1')
  coreV1(@Res() response: Response): void {
    this.v3 ??= document(openApiV3CoreV1());
    this.send(response, this.v3);
  }

  private send(response: Response, doc: Document): void {
    response.status(200).type('application/json').setHeader('etag', `"${doc.hash}"`).send(doc.body);
  }
}
