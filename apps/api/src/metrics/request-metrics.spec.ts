import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { requestInfo } from './request-metrics.js';

describe('requestInfo', () => {
  it('names verbs, resources and scopes as kube-apiserver does', () => {
    assert.deepEqual(requestInfo('GET', '/api/v1/namespaces/default/pods', {}), { verb: 'LIST', resource: 'pods', subresource: '', scope: 'namespace' });
    assert.deepEqual(requestInfo('GET', '/api/v1/pods', { watch: 'true' }), { verb: 'WATCH', resource: 'pods', subresource: '', scope: 'cluster' });
    assert.deepEqual(requestInfo('GET', '/api/v1/namespaces/default/pods/web/log', {}), {
      verb: 'GET',
      resource: 'pods',
      subresource: 'log',
      scope: 'resource',
    });
    assert.deepEqual(requestInfo('PATCH', '/api/v1/nodes/n1', {}), { verb: 'PATCH', resource: 'nodes', subresource: '', scope: 'resource' });
    assert.deepEqual(requestInfo('POST', '/api/v1/namespaces/default/pods', {}), { verb: 'POST', resource: 'pods', subresource: '', scope: 'namespace' });
    assert.deepEqual(requestInfo('DELETE', '/api/v1/namespaces/default/pods', {}), { verb: 'DELETE', resource: 'pods', subresource: '', scope: 'namespace' });
    assert.deepEqual(requestInfo('GET', '/api/v1/watch/namespaces/default/pods', {}), { verb: 'WATCH', resource: 'pods', subresource: '', scope: 'namespace' });
    assert.deepEqual(requestInfo('GET', '/version', {}), { verb: 'GET', resource: '', subresource: '', scope: '' });
  });
});
