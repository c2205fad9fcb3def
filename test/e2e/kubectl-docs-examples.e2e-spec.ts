import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Cluster, uniqueName } from '../harness/cluster.js';
import { Kubectl } from '../harness/kubectl.js';
import { ROOT, waitFor } from '../harness/processes.js';

const fixture = (name: string): string => readFileSync(join(ROOT, 'test/fixtures/docs', name), 'utf8');

/**
 * The names the examples use for busybox. No registry is reachable, so the suite builds them
 * from images/docs-busybox (the local busybox, plus the printenv applet the examples call). Each
 * carries a version tag, so the default pull policy is IfNotPresent and nothing is pulled;
 * examples that name an image without a tag mean `imagePullPolicy: Always`, a pull from a
 * public registry, and are not among these.
 */
const DOCS_IMAGES = ['busybox:1.28', 'registry.k8s.io/busybox:1.27.2'];
/** The label images/docs-busybox carries: a tag without it is someone else's image, used as it is and left in place. */
const OURS = 'io.jetlet.test-image';

/**
 * Manifests from the Kubernetes documentation's examples, applied unmodified with the real
 * kubectl, run on a real agent and Docker engine; each test checks what the docs page tells
 * the reader to look at (logs, files in the container, `id`).
 */
describe('unmodified manifests from the Kubernetes docs', () => {
  let sut: Cluster;
  let kubectl: Kubectl;
  let node: string;
  /** The names this suite builds: those absent from the engine, or built by it before. */
  const built: string[] = [];

  before(async () => {
    sut = await Cluster.start();
    for (const name of DOCS_IMAGES) {
      const found = await sut.dockerCli('image', 'inspect', '--format', `{{index .Config.Labels "${OURS}"}}`, name);
      if (found.code !== 0 || found.stdout.trim() !== '') built.push(name);
    }
    if (built.length > 0) {
      const build = await sut.dockerCli('build', '-q', ...built.flatMap((name) => ['-t', name]), join(ROOT, 'images/docs-busybox'));
      assert.equal(build.code, 0, build.stderr);
    }
    node = uniqueName('docs');
    await sut.startAgent(node);
    kubectl = new Kubectl(sut.apiUrl);
  });

  after(async () => {
    kubectl?.dispose();
    await sut?.stop();
    if (built.length > 0) await sut?.dockerCli('rmi', ...built);
  });

  const apply = (name: string): Promise<string> => kubectl.ok(['apply', '-f', '-'], fixture(name));
  /** Waits on the pod's own status through kubectl, as a reader of the docs would: `kubectl wait`. */
  const waitUntil = (pod: string, condition: string): Promise<string> =>
    sut.withLogs(kubectl.ok(['wait', `--for=${condition}`, `pod/${pod}`, '--timeout=90s']));
  /** The container's log once it holds `pattern` (a looping example prints on its own schedule). */
  const logsMatching = async (pod: string, pattern: RegExp, container?: string): Promise<string> => {
    let last = '';
    try {
      return await waitFor(
        `the log of ${pod} to match ${pattern}`,
        async () => {
          last = await kubectl.ok(['logs', pod, ...(container ? ['-c', container] : [])]);
          return pattern.test(last) ? last : undefined;
        },
        30_000,
        250,
      );
    } catch (error) {
      throw new Error(`${(error as Error).message}\nlast log: ${JSON.stringify(last)}`, { cause: error });
    }
  };
  const exec = (pod: string, ...command: string[]): Promise<string> => kubectl.ok(['exec', pod, '--', ...command]);
  /** Deletes the pod and waits until it is gone; its shell loops ignore SIGTERM, so a short grace period. */
  const remove = async (pod: string): Promise<void> => {
    assert.match(await kubectl.ok(['delete', 'pod', pod, '--grace-period=1']), new RegExp(`pod "${pod}" deleted`));
  };

  it('turns ConfigMap keys into environment variables and files (configure-pod-configmap)', async () => {
    assert.equal(await apply('configmaps.yaml'), 'configmap/special-config created\nconfigmap/env-config created\n');

    assert.equal(await apply('pod-multiple-configmap-env-variable.yaml'), 'pod/dapi-test-pod created\n');
    await waitUntil('dapi-test-pod', 'jsonpath={.status.phase}=Succeeded');
    const env = await kubectl.ok(['logs', 'dapi-test-pod']);
    assert.match(env, /^SPECIAL_LEVEL_KEY=very$/m);
    assert.match(env, /^LOG_LEVEL=INFO$/m);
    await remove('dapi-test-pod');

    assert.equal(await apply('pod-configmap-volume.yaml'), 'pod/dapi-test-pod created\n');
    await waitUntil('dapi-test-pod', 'jsonpath={.status.phase}=Succeeded');
    assert.equal(await kubectl.ok(['logs', 'dapi-test-pod']), 'special.how\n');
    assert.match(await kubectl.ok(['get', 'pod', 'dapi-test-pod']), /dapi-test-pod\s+0\/1\s+Completed\s+0\s+/);
    await remove('dapi-test-pod');
  });

  it('shows the pod its labels and annotations in a downward API volume (downward-api-volume-expose-pod-information)', async () => {
    const pod = 'kubernetes-downwardapi-volume-example';
    assert.equal(await apply('dapi-volume.yaml'), `pod/${pod} created\n`);
    await waitUntil(pod, 'condition=Ready');
    const labels = 'cluster="test-cluster1"\nrack="rack-22"\nzone="us-est-coast"';
    const logs = await logsMatching(pod, /builder="john-doe"/);
    assert.ok(logs.includes(labels), logs);
    assert.match(logs, /^build="two"$/m);
    assert.equal(await exec(pod, 'cat', '/etc/podinfo/labels'), labels);
    // The kubelet's layout: each file is a link through `..data` to a timestamped directory.
    assert.equal((await exec(pod, 'readlink', '/etc/podinfo/labels')).trim(), '..data/labels');
    assert.match(await exec(pod, 'ls', '-a', '/etc/podinfo'), /^\.\.\d{4}_\d\d_\d\d_\d\d_\d\d_\d\d\.\w+$/m);
    await remove(pod);
  });

  it('exposes pod and container fields as environment variables (environment-variable-expose-pod-information)', async () => {
    assert.equal(await apply('dapi-envars-pod.yaml'), 'pod/dapi-envars-fieldref created\n');
    await waitUntil('dapi-envars-fieldref', 'condition=Ready');
    const ip = await kubectl.ok(['get', 'pod', 'dapi-envars-fieldref', '-o', 'jsonpath={.status.podIP}']);
    assert.match(ip, /^\d+\.\d+\.\d+\.\d+$/);
    await logsMatching('dapi-envars-fieldref', new RegExp(`^${node}\ndapi-envars-fieldref\ndefault\n${ip.replaceAll('.', '\\.')}\ndefault$`, 'm'));

    assert.equal(await apply('dapi-envars-container.yaml'), 'pod/dapi-envars-resourcefieldref created\n');
    await waitUntil('dapi-envars-resourcefieldref', 'condition=Ready');
    // Requests and limits with the default divisor 1: cpu rounds up to whole cores, memory is in bytes.
    await logsMatching('dapi-envars-resourcefieldref', /^1\n1\n33554432\n67108864$/m);
    await remove('dapi-envars-fieldref');
    await remove('dapi-envars-resourcefieldref');
  });

  it('runs as the user and groups of the security context, with volume files owned by fsGroup (security-context)', async () => {
    const pod = 'security-context-demo';
    assert.equal(await apply('security-context.yaml'), `pod/${pod} created\n`);
    await waitUntil(pod, 'condition=Ready');
    const id = await exec(pod, 'id');
    assert.match(id, /^uid=1000 gid=3000 groups=/);
    const groups = /groups=(\S+)/.exec(id)?.[1].split(',') ?? [];
    assert.ok(groups.includes('2000') && groups.includes('4000'), id);
    assert.match(await exec(pod, 'ps'), /^\s*1 1000\s+.*sleep 1h$/m);
    assert.match(await exec(pod, 'ls', '-ld', '/data/demo'), /^drwxrwsrwx\s+\d+\s+(?:root|0)\s+2000\s/);
    assert.match(await exec(pod, 'sh', '-c', 'cd /data/demo && echo hello > testfile && ls -l'), /-rw-r--r--\s+1\s+1000\s+2000\s+6\s.*testfile/);
    // allowPrivilegeEscalation: false is the no_new_privs flag on the container's processes.
    assert.match(await exec(pod, 'grep', 'NoNewPrivs', '/proc/1/status'), /NoNewPrivs:\s+1/);
    await remove(pod);
  });

  it('projects two Secrets into one volume (configure-projected-volume-storage)', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'jetlet-docs-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    // As the page does it: `echo -n "admin" > ./username.txt` and so on, then `kubectl create secret`.
    writeFileSync(join(dir, 'username.txt'), 'admin');
    writeFileSync(join(dir, 'password.txt'), '1f2d1e2e67df');
    await kubectl.ok(['create', 'secret', 'generic', 'user', `--from-file=${join(dir, 'username.txt')}`]);
    await kubectl.ok(['create', 'secret', 'generic', 'pass', `--from-file=${join(dir, 'password.txt')}`]);
    assert.equal(await apply('projected.yaml'), 'pod/test-projected-volume created\n');
    await waitUntil('test-projected-volume', 'condition=Ready');
    assert.equal(await exec('test-projected-volume', 'ls', '/projected-volume/'), 'password.txt\nusername.txt\n');
    assert.equal(await exec('test-projected-volume', 'cat', '/projected-volume/username.txt', '/projected-volume/password.txt'), 'admin1f2d1e2e67df');
    const readOnly = await kubectl.run(['exec', 'test-projected-volume', '--', 'touch', '/projected-volume/x']);
    assert.notEqual(readOnly.code, 0);
    assert.match(readOnly.stderr, /Read-only file system/);
    await remove('test-projected-volume');
  });

  it('starts the app only after its sidecar init container has started (multi-container startup coordination)', async () => {
    const pod = 'startup-coordination-example';
    assert.equal(await apply('startup-coordination.yaml'), `pod/${pod} created\n`);
    await waitUntil(pod, 'condition=Ready');
    assert.equal(await logsMatching(pod, /greeting=hello/, 'main-app'), 'greeting=hello\n');
    assert.match(await kubectl.ok(['get', 'pod', pod]), new RegExp(`${pod}\\s+2/2\\s+Running\\s+0\\s+`));
    const sidecar = JSON.parse(await kubectl.ok(['get', 'pod', pod, '-o', 'jsonpath={.status.initContainerStatuses[0]}'])) as {
      name: string;
      started: boolean;
      ready: boolean;
      state: { running?: object };
    };
    assert.deepEqual([sidecar.name, sidecar.started, sidecar.ready, Boolean(sidecar.state.running)], ['config-sidecar', true, true, true]);
    await remove(pod);
  });
});
