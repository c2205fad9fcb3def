import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { checkPodSecurity, enforcedLevel, podSecurityMessage } from './pod-security.js';

const plain = { containers: [{ name: 'app', image: 'busybox' }] };
const message = (level: 'baseline' | 'restricted', spec: object): string => podSecurityMessage(level, checkPodSecurity(level, spec));

describe('checkPodSecurity', () => {
  it('allows a plain pod at baseline and anything at privileged', () => {
    assert.deepEqual(checkPodSecurity('baseline', plain), []);
    assert.deepEqual(checkPodSecurity('privileged', { hostNetwork: true, containers: [{ name: 'a', securityContext: { privileged: true } }] }), []);
  });

  it('refuses what baseline forbids, worded and ordered as the admission plugin', () => {
    const spec = {
      hostNetwork: true,
      hostPID: true,
      volumes: [{ name: 'root', hostPath: { path: '/' } }, { name: 'tmp', emptyDir: {} }],
      containers: [
        { name: 'a', securityContext: { privileged: true, capabilities: { add: ['NET_ADMIN', 'CHOWN'] } }, ports: [{ containerPort: 80, hostPort: 8080 }] },
        { name: 'b', securityContext: { privileged: true, capabilities: { add: ['SYS_ADMIN'] } } },
      ],
    };
    assert.equal(
      message('baseline', spec),
      'violates PodSecurity "baseline:latest": non-default capabilities (containers "a", "b" must not include "NET_ADMIN", "SYS_ADMIN" in securityContext.capabilities.add), ' +
        'host namespaces (hostNetwork=true, hostPID=true), hostPath volumes (volume "root"), hostPort (container "a" uses hostPort 8080), ' +
        'privileged (containers "a", "b" must not set securityContext.privileged=true)',
    );
  });

  it('checks init containers too', () => {
    const spec = { ...plain, initContainers: [{ name: 'init', securityContext: { privileged: true } }] };
    assert.equal(message('baseline', spec), 'violates PodSecurity "baseline:latest": privileged (container "init" must not set securityContext.privileged=true)');
  });

  it('asks restricted pods to drop everything and run as non-root with a seccomp profile', () => {
    const reasons = checkPodSecurity('restricted', { ...plain, volumes: [{ name: 'h', hostPath: { path: '/' } }] }).map((v) => v.reason);
    assert.deepEqual(reasons, ['allowPrivilegeEscalation != false', 'unrestricted capabilities', 'restricted volume types', 'runAsNonRoot != true', 'seccompProfile']);
    const hardened = {
      securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
      containers: [{ name: 'app', securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'], add: ['NET_BIND_SERVICE'] } } }],
    };
    assert.deepEqual(checkPodSecurity('restricted', hardened), []);
  });
});

describe('enforcedLevel', () => {
  it('reads the namespace label, else the default', () => {
    assert.equal(enforcedLevel(undefined, 'baseline'), 'baseline');
    assert.equal(enforcedLevel({ 'pod-security.kubernetes.io/enforce': 'privileged' }, 'baseline'), 'privileged');
    assert.equal(enforcedLevel({ 'pod-security.kubernetes.io/enforce': 'bogus' }, 'baseline'), undefined);
  });
});
