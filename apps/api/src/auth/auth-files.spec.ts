import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseRoleBindings, RoleBindingsError } from './role-bindings.js';
import { bearerToken } from './auth.service.js';
import { TokenAuthenticator, TokenFileError } from './token-file.js';

describe('TokenAuthenticator', () => {
  const sut = TokenAuthenticator.parse('# comment\nt-admin,admin,1000,"system:masters,ops"\nt-view, viewer ,1001\n\n');

  it('reads kube-apiserver token files, groups quoted, and adds system:authenticated', () => {
    assert.deepEqual(sut.authenticate('t-admin'), { name: 'admin', uid: '1000', groups: ['system:masters', 'ops', 'system:authenticated'] });
    assert.deepEqual(sut.authenticate('t-view'), { name: 'viewer', uid: '1001', groups: ['system:authenticated'] });
    assert.equal(sut.authenticate('t-nobody'), undefined);
    assert.equal(sut.authenticate(''), undefined);
  });

  it('refuses records without a user, and a token given twice', () => {
    assert.throws(() => TokenAuthenticator.parse('only-a-token\n'), TokenFileError);
    assert.throws(() => TokenAuthenticator.parse('t,a,1\nt,b,2\n'), /given twice/);
    assert.throws(() => TokenAuthenticator.parse('t,a,1,"unterminated\n'), TokenFileError);
  });
});

describe('bearerToken', () => {
  it('reads the Authorization header and the WebSocket subprotocol', () => {
    assert.equal(bearerToken({ authorization: 'Bearer abc' }), 'abc');
    assert.equal(bearerToken({ authorization: 'bearer abc' }), 'abc');
    assert.equal(bearerToken({ authorization: 'Basic abc' }), undefined);
    const encoded = Buffer.from('tok').toString('base64url');
    assert.equal(bearerToken({ 'sec-websocket-protocol': `v5.channel.k8s.io, base64url.bearer.authorization.k8s.io.${encoded}` }), 'tok');
  });
});

describe('parseRoleBindings', () => {
  it('reads ClusterRoleBindings and namespaced RoleBindings of built-in roles', () => {
    const text = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: readers}
roleRef: {kind: ClusterRole, name: view}
subjects: [{kind: Group, name: readers}, {kind: User, name: alice}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: dev, namespace: team-a}
roleRef: {kind: ClusterRole, name: edit}
subjects: [{kind: User, name: bob}]
`;
    assert.deepEqual(parseRoleBindings(text), [
      { role: 'view', users: ['alice'], groups: ['readers'] },
      { role: 'edit', users: ['bob'], groups: [], namespace: 'team-a' },
    ]);
  });

  it('lists every problem: unknown roles, kinds and subjects, a RoleBinding without namespace', () => {
    const text = `kind: ClusterRoleBinding
metadata: {name: a}
roleRef: {name: superuser}
---
kind: RoleBinding
metadata: {name: b}
roleRef: {name: view}
---
kind: ClusterRoleBinding
metadata: {name: c}
roleRef: {name: view}
subjects: [{kind: ServiceAccount, name: x}]
`;
    assert.throws(
      () => parseRoleBindings(text),
      (error: Error) => error instanceof RoleBindingsError && /superuser|roleRef.name/.test(error.message) && /needs metadata.namespace/.test(error.message) && /ServiceAccount/.test(error.message),
    );
  });
});
