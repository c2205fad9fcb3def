import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { authorize, forbiddenMessage, isPublicPath, requestAttributes, type RoleBinding, type UserInfo } from './authorization.js';

const viewer: UserInfo = { name: 'viewer', uid: '1', groups: ['readers', 'system:authenticated'] };
const editor: UserInfo = { name: 'editor', uid: '2', groups: ['system:authenticated'] };
const admin: UserInfo = { name: 'root', uid: '0', groups: ['system:masters', 'system:authenticated'] };
const node: UserInfo = { name: 'system:node:n1', uid: '', groups: ['system:nodes', 'system:authenticated'] };
const bindings: RoleBinding[] = [
  { role: 'view', users: [], groups: ['readers'] },
  { role: 'edit', users: ['editor'], groups: [], namespace: 'team-a' },
];
const can = (user: UserInfo, method: string, path: string, query: Record<string, string> = {}): boolean =>
  authorize(user, requestAttributes(method, path, query), bindings).allowed;

describe('requestAttributes', () => {
  it('reads verbs, resources and namespaces as kube-apiserver does', () => {
    const a = requestAttributes('DELETE', '/api/v1/namespaces/y/pods/x');
    assert.deepEqual([a.verb, a.resource, a.namespace, a.name, a.apiGroup, a.isResourceRequest], ['delete', 'pods', 'y', 'x', '', true]);
    assert.equal(requestAttributes('GET', '/api/v1/namespaces/y/pods').verb, 'list');
    assert.equal(requestAttributes('GET', '/api/v1/pods', { watch: 'true' }).verb, 'watch');
    assert.equal(requestAttributes('GET', '/api/v1/watch/namespaces/y/pods/x').verb, 'watch');
    assert.equal(requestAttributes('DELETE', '/api/v1/namespaces/y/pods').verb, 'deletecollection');
    assert.equal(requestAttributes('PUT', '/api/v1/namespaces/y/pods/x/status').subresource, 'status');
    assert.equal(requestAttributes('PATCH', '/api/v1/nodes/n1').verb, 'patch');
  });

  it('authorizes every way into a container (exec, attach, port-forward) as create, whatever the method', () => {
    for (const method of ['GET', 'POST']) {
      const a = requestAttributes(method, '/api/v1/namespaces/y/pods/x/exec');
      assert.deepEqual([a.verb, a.subresource], ['create', 'exec']);
    }
  });

  it('reads a namespace object as being in its own namespace, its status as a subresource', () => {
    const a = requestAttributes('GET', '/api/v1/namespaces/team-a/status');
    assert.deepEqual([a.resource, a.name, a.subresource, a.namespace], ['namespaces', 'team-a', 'status', 'team-a']);
    assert.equal(requestAttributes('DELETE', '/api/v1/namespaces/team-a').namespace, 'team-a');
  });

  it('reads other groups and non-resource paths', () => {
    const a = requestAttributes('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews');
    assert.deepEqual([a.verb, a.apiGroup, a.resource], ['create', 'authorization.k8s.io', 'selfsubjectaccessreviews']);
    for (const path of ['/metrics', '/api', '/apis', '/api/v1', '/openapi/v2', '/version']) assert.equal(requestAttributes('GET', path).isResourceRequest, false, path);
  });
});

describe('authorize', () => {
  it('lets view read but not write, and never read secrets or nodes', () => {
    assert.ok(can(viewer, 'GET', '/api/v1/namespaces/y/pods'));
    assert.ok(can(viewer, 'GET', '/api/v1/pods', { watch: 'true' }));
    assert.ok(can(viewer, 'GET', '/api/v1/namespaces/y/pods/x/log'));
    assert.ok(!can(viewer, 'DELETE', '/api/v1/namespaces/y/pods/x'));
    assert.ok(!can(viewer, 'POST', '/api/v1/namespaces/y/pods'));
    assert.ok(!can(viewer, 'GET', '/api/v1/namespaces/y/secrets/s'));
    assert.ok(!can(viewer, 'GET', '/api/v1/nodes'));
    assert.ok(!can(viewer, 'POST', '/api/v1/namespaces/y/pods/x/exec'));
  });

  it('grants a RoleBinding only in its namespace', () => {
    assert.ok(can(editor, 'DELETE', '/api/v1/namespaces/team-a/pods/x'));
    assert.ok(can(editor, 'POST', '/api/v1/namespaces/team-a/pods/x/exec'));
    assert.ok(!can(editor, 'DELETE', '/api/v1/namespaces/default/pods/x'));
    assert.ok(!can(editor, 'GET', '/api/v1/pods'), 'a list across namespaces is cluster-wide');
    assert.ok(!can(editor, 'DELETE', '/api/v1/namespaces/team-a'), 'edit cannot delete its namespace');
    assert.ok(!can(editor, 'GET', '/metrics'));
  });

  it('lets every authenticated user read discovery and ask what it may do, and cluster-admin do anything', () => {
    assert.ok(can(editor, 'GET', '/apis'));
    assert.ok(can(editor, 'GET', '/openapi/v3/api/v1'));
    assert.ok(can(editor, 'POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews'));
    assert.ok(!can(editor, 'GET', '/metrics'));
    assert.ok(can(admin, 'GET', '/metrics'));
    assert.ok(can(admin, 'DELETE', '/api/v1/namespaces/kube-system'));
  });

  it('lets nodes read what they run but not change pods', () => {
    assert.ok(can(node, 'GET', '/api/v1/nodes/n1'));
    assert.ok(can(node, 'GET', '/api/v1/namespaces/y/secrets/s'));
    assert.ok(!can(node, 'DELETE', '/api/v1/namespaces/y/pods/x'));
    assert.ok(!can(node, 'POST', '/api/v1/namespaces/y/pods'));
  });
});

describe('forbiddenMessage', () => {
  it('words a 403 as kube-apiserver does', () => {
    assert.equal(
      forbiddenMessage('x', requestAttributes('DELETE', '/api/v1/namespaces/y/pods/p')),
      'pods "p" is forbidden: User "x" cannot delete resource "pods" in API group "" in the namespace "y"',
    );
    assert.equal(
      forbiddenMessage('x', requestAttributes('GET', '/api/v1/namespaces/y/pods')),
      'pods is forbidden: User "x" cannot list resource "pods" in API group "" in the namespace "y"',
    );
    assert.equal(forbiddenMessage('x', requestAttributes('GET', '/api/v1/nodes')), 'nodes is forbidden: User "x" cannot list resource "nodes" in API group "" at the cluster scope');
    assert.equal(
      forbiddenMessage('x', requestAttributes('POST', '/api/v1/namespaces/y/pods/p/exec')),
      'pods "p" is forbidden: User "x" cannot create resource "pods/exec" in API group "" in the namespace "y"',
    );
    assert.equal(forbiddenMessage('x', requestAttributes('GET', '/metrics')), 'forbidden: User "x" cannot get path "/metrics"');
  });
});

describe('isPublicPath', () => {
  it('is open for health and version only', () => {
    for (const p of ['/healthz', '/livez', '/readyz', '/readyz/nats', '/version']) assert.ok(isPublicPath(p), p);
    for (const p of ['/', '/api', '/apis', '/metrics', '/openapi/v2', '/healthzx', '/api/v1/pods']) assert.ok(!isPublicPath(p), p);
  });
});
