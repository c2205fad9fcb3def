import { Body, Controller, HttpCode, Post, Req } from '@nestjs/common';
import type { Request } from 'express';
import type { RequestAttributes } from '#domain';
import { KubeStatusException } from '../errors/kube-status.exception.js';
import { ProtobufDecodeError } from '../namespaces/namespace-protobuf.js';
import { AuthService } from './auth.service.js';
import { callerOf } from './auth.middleware.js';
import { decodeSelfSubjectAccessReview, type SelfSubjectAccessReviewSpec } from './self-subject-access-review.protobuf.js';

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** authorization.k8s.io/v1 SelfSubjectAccessReview: may I do this? (`kubectl auth can-i`) */
@Controller('apis/authorization.k8s.io/v1/selfsubjectaccessreviews')
export class SelfSubjectAccessReviewController {
  constructor(private readonly auth: AuthService) {}

  @Post()
  @HttpCode(201)
  create(@Req() req: Request, @Body() body: unknown): object {
    let spec: SelfSubjectAccessReviewSpec;
    try {
      // kubectl's typed client posts protobuf; other clients JSON.
      spec = Buffer.isBuffer(body) ? decodeSelfSubjectAccessReview(body).spec : ((body as { spec?: SelfSubjectAccessReviewSpec } | null)?.spec ?? {});
    } catch (error) {
      if (error instanceof ProtobufDecodeError) throw KubeStatusException.badRequest(`the protobuf body could not be decoded: ${error.message}`);
      throw error;
    }
    const user = callerOf(req);
    if (!user) throw new KubeStatusException(401, 'Unauthorized', 'Unauthorized');
    const r = spec.resourceAttributes;
    const n = spec.nonResourceAttributes;
    if ((r === undefined) === (n === undefined)) {
      throw KubeStatusException.invalid('selfsubjectaccessreviews', '', [
        { field: 'spec.resourceAttributes', reason: 'FieldValueRequired', message: 'Required value: exactly one of nonResourceAttributes or resourceAttributes must be specified' },
      ]);
    }
    const attrs: RequestAttributes = r
      ? {
          verb: str(r.verb),
          isResourceRequest: true,
          path: '',
          apiGroup: str(r.group),
          apiVersion: str(r.version),
          resource: str(r.resource),
          subresource: str(r.subresource),
          namespace: str(r.namespace),
          name: str(r.name),
        }
      : { verb: str(n?.verb), isResourceRequest: false, path: str(n?.path), apiGroup: '', apiVersion: '', resource: '', subresource: '', namespace: '', name: '' };
    const decision = this.auth.authorize(user, attrs);
    return {
      kind: 'SelfSubjectAccessReview',
      apiVersion: 'authorization.k8s.io/v1',
      metadata: { creationTimestamp: null },
      spec,
      status: { allowed: decision.allowed, ...(decision.reason ? { reason: decision.reason } : {}) },
    };
  }
}
