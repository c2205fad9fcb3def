import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseContract, PodManifest } from '#contracts';
import { ContainerConfigError } from './container-env.js';
import { podSpecCauses } from './pod-defaults.js';
import { containerSecurity, effectiveSecurityContext, imageUser, podSysctls, verifyRunAsNonRoot } from './security-context.js';

const manifest = (podSc: object, sc?: object): PodManifest =>
  parseContract(PodManifest, {
    metadata: { name: 'web', namespace: 'team' },
    spec: { securityContext: podSc, containers: [{ name: 'main', image: 'jetlet/busybox:1.35', ...(sc ? { securityContext: sc } : {}) }] },
  });
const main = (m: PodManifest) => m.spec.containers[0];

describe('security contexts', () => {
  it("lets the container's settings win over the pod's", () => {
    const m = manifest({ runAsUser: 1000, runAsGroup: 2000, runAsNonRoot: true }, { runAsUser: 1001 });
    assert.deepEqual(effectiveSecurityContext(m, main(m)), { runAsUser: 1001, runAsGroup: 2000, runAsNonRoot: true });
  });

  it('reads the image user as the kubelet does: none is root, a name cannot be checked', () => {
    assert.deepEqual(imageUser(''), { uid: 0 });
    assert.deepEqual(imageUser('1000:1000'), { uid: 1000 });
    assert.deepEqual(imageUser('nobody'), { name: 'nobody' });
  });

  it("refuses runAsNonRoot with the kubelet's messages", () => {
    const m = manifest({ runAsNonRoot: true });
    assert.throws(() => verifyRunAsNonRoot(m, 'u1', main(m), ''), new ContainerConfigError('container has runAsNonRoot and image will run as root (pod: "web_team(u1)", container: main)'));
    assert.throws(
      () => verifyRunAsNonRoot(m, 'u1', main(m), 'app'),
      new ContainerConfigError('container has runAsNonRoot and image has non-numeric user (app), cannot verify user is non-root (pod: "web_team(u1)", container: main)'),
    );
    const zero = manifest({ runAsNonRoot: true }, { runAsUser: 0 });
    assert.throws(() => verifyRunAsNonRoot(zero, 'u1', main(zero), '1000'), new ContainerConfigError(`container's runAsUser breaks non-root policy (pod: "web_team(u1)", container: main)`));
    assert.doesNotThrow(() => verifyRunAsNonRoot(m, 'u1', main(m), '1000'));
    const set = manifest({ runAsNonRoot: true, runAsUser: 1000 });
    assert.doesNotThrow(() => verifyRunAsNonRoot(set, 'u1', main(set), ''));
    const off = manifest({});
    assert.doesNotThrow(() => verifyRunAsNonRoot(off, 'u1', main(off), ''));
  });

  it('turns the effective context into engine settings', () => {
    const m = manifest(
      { runAsGroup: 3000, fsGroup: 2000, supplementalGroups: [4000, 2000], sysctls: [{ name: 'net.ipv4.ip_unprivileged_port_start', value: '80' }, { name: 'kernel.shm_rmid_forced', value: '1' }] },
      { runAsUser: 1000, readOnlyRootFilesystem: true, capabilities: { add: ['NET_ADMIN'], drop: ['ALL'] }, allowPrivilegeEscalation: false },
    );
    assert.deepEqual(containerSecurity(m, main(m), ''), {
      user: '1000:3000',
      groupAdd: ['2000', '4000'],
      readOnlyRootFilesystem: true,
      capAdd: ['NET_ADMIN'],
      capDrop: ['ALL'],
      noNewPrivileges: true,
      sysctls: { 'kernel.shm_rmid_forced': '1' },
    });
    assert.deepEqual(podSysctls(m).sandbox, { 'net.ipv4.ip_unprivileged_port_start': '80' });
    const groupOnly = manifest({ runAsGroup: 5 });
    assert.equal(containerSecurity(groupOnly, main(groupOnly), 'app').user, 'app:5');
  });

  it('refuses contradictions and sysctls outside the namespaced ones, naming each field', () => {
    const m = manifest({}, { privileged: true, allowPrivilegeEscalation: false });
    assert.deepEqual(
      podSpecCauses(m).map((c) => c.field),
      ['spec.containers[0].securityContext'],
    );
    assert.throws(
      () => manifest({ sysctls: [{ name: 'kernel.panic', value: '1' }] }),
      (error: Error & { causes: Array<{ field: string }> }) => error.causes.some((c) => c.field === 'spec.securityContext.sysctls[0].name'),
    );
  });
});
