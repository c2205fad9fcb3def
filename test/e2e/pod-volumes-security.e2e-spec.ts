import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Pod } from '#contracts';
import { Cluster, mountsUnder, uniqueName } from '../harness/cluster.js';
import { Kubectl } from '../harness/kubectl.js';
import { waitFor } from '../harness/processes.js';

const IMAGE = 'jetlet/busybox:1.35';
const NS = 'podspec';
const SECRET_VALUE = 'pw-' + randomBytes(6).toString('hex');
const b64 = (s: string): string => Buffer.from(s).toString('base64');

/** Volumes, security contexts and image pull secrets of pods, on a real agent, Docker engine and registry. */
describe('pods with volumes and security contexts', () => {
  let sut: Cluster;
  let kubectl: Kubectl;
  let node: string;
  let hostDir: string;

  before(async () => {
    sut = await Cluster.start();
    node = uniqueName('podspec');
    await sut.startAgent(node);
    kubectl = Kubectl.as(sut);
    // hostPath is outside Pod Security's baseline: this namespace allows it, as a cluster admin would.
    const ns = { metadata: { name: NS, labels: { 'pod-security.kubernetes.io/enforce': 'privileged' } } };
    assert.equal((await sut.request('POST', '/api/v1/namespaces', ns)).status, 201);
    hostDir = mkdtempSync(join(tmpdir(), 'jetlet-hostpath-'));
    writeFileSync(join(hostDir, 'from-host'), 'host-data');
  });

  after(async () => {
    kubectl?.dispose();
    await sut?.stop();
    if (hostDir) rmSync(hostDir, { recursive: true, force: true });
  });

  const create = async (kind: 'configmaps' | 'secrets', body: object): Promise<void> => {
    const { status, body: answer } = await sut.request('POST', `/api/v1/namespaces/${NS}/${kind}`, body);
    assert.equal(status, 201, JSON.stringify(answer));
  };
  const exec = (pod: string, container: string, script: string): Promise<string> => kubectl.ok(['-n', NS, 'exec', pod, '-c', container, '--', 'sh', '-c', script]);
  const sleeper = (name: string, extra: object = {}): object => ({ name, image: IMAGE, command: ['sleep', '3600'], ...extra });

  it('mounts ConfigMap, Secret, downward API, projected, emptyDir and hostPath volumes, shared by the containers', async () => {
    await create('configmaps', { metadata: { name: 'settings' }, data: { mode: 'fast', 'app.conf': 'level=3\n' } });
    await create('secrets', { metadata: { name: 'creds' }, data: { password: b64(SECRET_VALUE) } });
    const pod = await sut.createPod(NS, {
      metadata: { name: 'vols', labels: { team: 'blue', tier: 'web' } },
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [
          sleeper('writer', {
            command: ['sh', '-c', 'echo shared-by-writer > /scratch/note && sleep 3600'],
            volumeMounts: [
              { name: 'scratch', mountPath: '/scratch' },
              { name: 'cfg', mountPath: '/etc/cfg' },
              { name: 'cfg', mountPath: '/etc/one/mode', subPath: 'mode' },
              { name: 'sec', mountPath: '/etc/sec' },
              { name: 'down', mountPath: '/etc/podinfo' },
              { name: 'proj', mountPath: '/etc/proj' },
              { name: 'mem', mountPath: '/mem' },
              { name: 'host', mountPath: '/host' },
              { name: 'scratch', mountPath: '/sub', subPath: 'nested/dir' },
            ],
          }),
          sleeper('reader', { volumeMounts: [{ name: 'scratch', mountPath: '/scratch', readOnly: true }] }),
        ],
        volumes: [
          { name: 'scratch', emptyDir: {} },
          { name: 'cfg', configMap: { name: 'settings' } },
          { name: 'sec', secret: { secretName: 'creds', defaultMode: 0o400 } },
          { name: 'down', downwardAPI: { items: [{ path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } }] } },
          {
            name: 'proj',
            projected: { sources: [{ configMap: { name: 'settings', items: [{ key: 'mode', path: 'cfg/mode' }] } }, { secret: { name: 'creds' } }, { configMap: { name: 'absent', optional: true } }] },
          },
          { name: 'mem', emptyDir: { medium: 'Memory', sizeLimit: '2Mi' } },
          { name: 'host', hostPath: { path: hostDir, type: 'Directory' } },
        ],
      },
    });
    await sut.waitForRunning(NS, 'vols');
    assert.equal(await exec('vols', 'writer', 'cat /etc/cfg/mode /etc/cfg/app.conf'), 'fastlevel=3\n');
    assert.equal(await exec('vols', 'writer', 'cat /etc/sec/password'), SECRET_VALUE);
    assert.match(await exec('vols', 'writer', 'ls -lL /etc/sec/password'), /^-r-------- /, 'defaultMode 0400');
    assert.match(await exec('vols', 'writer', 'ls -lL /etc/cfg/mode'), /^-rw-r--r-- /, 'default mode 0644');
    assert.equal(await exec('vols', 'writer', 'cat /etc/podinfo/labels'), 'team="blue"\ntier="web"');
    assert.equal(await exec('vols', 'writer', 'cat /etc/proj/cfg/mode /etc/proj/password'), `fast${SECRET_VALUE}`);
    assert.match(await exec('vols', 'writer', 'ls -a /etc/cfg'), /\.\.data/, "the kubelet's ..data layout");
    // The emptyDir is one directory for both containers; the reader's mount is read-only.
    await waitFor('the writer to write the shared note', async () => (await exec('vols', 'reader', 'cat /scratch/note 2>/dev/null || true')) === 'shared-by-writer\n', 30_000);
    assert.match(await exec('vols', 'reader', 'touch /scratch/x 2>&1 || echo refused'), /Read-only file system[\s\S]*refused/);
    assert.match(await exec('vols', 'writer', 'touch /etc/cfg/x 2>&1 || echo refused'), /Read-only file system[\s\S]*refused/, 'ConfigMap volumes are read-only');
    // subPath of an emptyDir: made as a directory inside the volume.
    await exec('vols', 'writer', 'echo deep > /sub/f');
    assert.equal(await exec('vols', 'reader', 'cat /scratch/nested/dir/f'), 'deep\n');
    // Memory emptyDir: a tmpfs of sizeLimit.
    assert.match(await exec('vols', 'writer', 'grep " /mem " /proc/mounts'), /^tmpfs \/mem tmpfs .*size=2048k/);
    // hostPath: the node's directory, both ways.
    assert.equal(await exec('vols', 'writer', 'cat /host/from-host && echo from-pod > /host/from-pod'), 'host-data');
    assert.equal(readFileSync(join(hostDir, 'from-pod'), 'utf8'), 'from-pod\n');
    // The Secret volume is a tmpfs on the node: its value never reaches the disk.
    assert.ok(
      mountsUnder(sut.agents.get(node)?.rootDir ?? '/nonexistent').some((p) => p.includes(pod.metadata.uid ?? '?') && p.endsWith('kubernetes.io~secret/sec')),
      'secret volume on tmpfs',
    );

    // An update of the ConfigMap reaches the volume within the sync period; the subPath keeps the old file.
    await sut.request('PATCH', `/api/v1/namespaces/${NS}/configmaps/settings`, { data: { mode: 'slow' } }, 'application/merge-patch+json');
    await sut.withLogs(waitFor('the ConfigMap update in the volume', async () => (await exec('vols', 'writer', 'cat /etc/cfg/mode')) === 'slow', 60_000));
    assert.equal(await exec('vols', 'writer', 'cat /etc/proj/cfg/mode'), 'slow');
    assert.equal(await exec('vols', 'writer', 'cat /etc/one/mode'), 'fast', 'a subPath mount is not updated');
    assert.ok(!sut.logs().includes(SECRET_VALUE), 'no log line holds the secret');

    // Removed with the pod: the in-memory volumes are unmounted and the directory goes.
    assert.equal((await sut.request('DELETE', `/api/v1/namespaces/${NS}/pods/vols`)).status, 200);
    await sut.waitForGone(NS, 'vols');
    const root = sut.agents.get(node)?.rootDir ?? '/nonexistent';
    await waitFor('the pod volumes unmounted', async () => !mountsUnder(root).some((p) => p.includes(pod.metadata.uid ?? '?')), 30_000);
    assert.equal(readFileSync(join(hostDir, 'from-host'), 'utf8'), 'host-data', 'a hostPath outlives the pod');
  });

  it('waits in ContainerCreating with FailedMount until a missing ConfigMap exists, and checks hostPath types', async () => {
    await sut.createPod(NS, {
      metadata: { name: 'late-cfg' },
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [sleeper('main', { volumeMounts: [{ name: 'cfg', mountPath: '/etc/cfg' }] })],
        volumes: [{ name: 'cfg', configMap: { name: 'later' } }],
      },
    });
    await sut.createPod(NS, {
      metadata: { name: 'not-a-file' },
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [sleeper('main', { volumeMounts: [{ name: 'h', mountPath: '/h' }] })],
        volumes: [{ name: 'h', hostPath: { path: hostDir, type: 'File' } }],
      },
    });
    const creating = (p: Pod): boolean => (p.status.containerStatuses ?? []).some((s) => s.state.waiting?.reason === 'ContainerCreating') && p.status.phase === 'Pending';
    await sut.waitForPod(NS, 'late-cfg', 'ContainerCreating', creating);
    await sut.waitForPod(NS, 'not-a-file', 'ContainerCreating', creating);
    const events = async (name: string): Promise<string> => kubectl.ok(['-n', NS, 'get', 'events', '--field-selector', `involvedObject.name=${name}`]);
    await waitFor('the FailedMount events', async () => /FailedMount.*MountVolume.SetUp failed for volume "cfg" : configmap "later" not found/.test(await events('late-cfg')), 30_000);
    await waitFor('the hostPath FailedMount event', async () => new RegExp(`FailedMount.*hostPath type check failed: ${hostDir} is not a file`).test(await events('not-a-file')), 30_000);
    await create('configmaps', { metadata: { name: 'later' }, data: { k: 'v' } });
    await sut.waitForRunning(NS, 'late-cfg');
    assert.equal(await exec('late-cfg', 'main', 'cat /etc/cfg/k'), 'v');
  });

  it('refuses bad volumes with a 422 naming each field', async () => {
    const { status, body } = await sut.request<{ details: { causes: Array<{ field: string; reason: string }> } }>('POST', `/api/v1/namespaces/${NS}/pods`, {
      metadata: { name: 'bad-vols' },
      spec: {
        containers: [sleeper('main', { volumeMounts: [{ name: 'missing', mountPath: '/a' }, { name: 'dup', mountPath: '/b', subPath: '../../etc' }] })],
        volumes: [
          { name: 'dup', emptyDir: {} },
          { name: 'dup', emptyDir: {} },
          { name: 'two', emptyDir: {}, configMap: { name: 'x' } },
          { name: 'esc', secret: { secretName: 's', items: [{ key: 'k', path: '../../x' }] } },
        ],
      },
    });
    assert.equal(status, 422);
    assert.deepEqual(body.details.causes.map((c) => `${c.field} ${c.reason}`).sort(), [
      'spec.containers[0].volumeMounts[0].name FieldValueNotFound',
      'spec.containers[0].volumeMounts[1].subPath FieldValueInvalid',
      'spec.volumes[1].name FieldValueDuplicate',
      'spec.volumes[2].configMap FieldValueForbidden',
      'spec.volumes[3].secret.items[0].path FieldValueInvalid',
    ]);
  });

  it('runs containers with their security context: user, groups, read-only root, capabilities, no_new_privs, sysctls', async () => {
    await sut.createPod(NS, {
      metadata: { name: 'secure' },
      spec: {
        terminationGracePeriodSeconds: 1,
        securityContext: {
          runAsUser: 1000,
          runAsGroup: 3000,
          fsGroup: 2000,
          supplementalGroups: [4000],
          sysctls: [
            { name: 'net.ipv4.ip_unprivileged_port_start', value: '80' },
            { name: 'kernel.shm_rmid_forced', value: '1' },
          ],
        },
        containers: [
          sleeper('main', {
            securityContext: { readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] }, allowPrivilegeEscalation: false },
            volumeMounts: [{ name: 'scratch', mountPath: '/scratch' }],
          }),
          sleeper('admin', { securityContext: { runAsUser: 0, capabilities: { add: ['NET_ADMIN'] } } }),
        ],
        volumes: [{ name: 'scratch', emptyDir: {} }],
      },
    });
    await sut.waitForRunning(NS, 'secure');
    assert.equal(await exec('secure', 'main', 'id -u; id -g'), '1000\n3000\n');
    assert.deepEqual((await exec('secure', 'main', 'id -G')).trim().split(' ').sort(), ['2000', '3000', '4000']);
    assert.match(await exec('secure', 'main', 'touch /x 2>&1 || echo refused'), /Read-only file system[\s\S]*refused/);
    // fsGroup owns the emptyDir, and what is written there.
    assert.equal(await exec('secure', 'main', 'touch /scratch/f && stat -c %g /scratch/f'), '2000\n');
    assert.match(await exec('secure', 'main', 'grep -E "^(CapEff|NoNewPrivs)" /proc/self/status'), /CapEff:\s+0000000000000000\nNoNewPrivs:\s+1/);
    assert.equal(await exec('secure', 'main', 'cat /proc/sys/net/ipv4/ip_unprivileged_port_start /proc/sys/kernel/shm_rmid_forced'), '80\n1\n');
    // The container's own runAsUser wins over the pod's; NET_ADMIN (bit 12) is added to the default set.
    assert.equal(await exec('secure', 'admin', 'id -u'), '0\n');
    const capEff = BigInt(`0x${(await exec('secure', 'admin', 'grep CapEff /proc/self/status')).split(/\s+/)[1] ?? '0'}`);
    assert.equal((capEff >> 12n) & 1n, 1n, 'CAP_NET_ADMIN');
  });

  it("refuses runAsNonRoot for an image that runs as root with CreateContainerConfigError and Kubernetes' message", async () => {
    const pod = await sut.createPod(NS, {
      metadata: { name: 'nonroot' },
      spec: { terminationGracePeriodSeconds: 1, securityContext: { runAsNonRoot: true }, containers: [sleeper('main')] },
    });
    const waiting = await sut.waitForPod(NS, 'nonroot', 'CreateContainerConfigError', (p) =>
      (p.status.containerStatuses ?? []).some((s) => s.state.waiting?.reason === 'CreateContainerConfigError'),
    );
    assert.equal(
      waiting.status.containerStatuses?.[0]?.state.waiting?.message,
      `container has runAsNonRoot and image will run as root (pod: "nonroot_${NS}(${pod.metadata.uid ?? ''})", container: main)`,
    );
    assert.match(await kubectl.ok(['-n', NS, 'get', 'pod', 'nonroot']), /nonroot\s+0\/1\s+CreateContainerConfigError/);
  });
});
