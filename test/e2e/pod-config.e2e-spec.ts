import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Pod } from '#contracts';
import { Cluster, uniqueName } from '../harness/cluster.js';
import { Kubectl } from '../harness/kubectl.js';
import { freePort, waitFor } from '../harness/processes.js';

const IMAGE = 'jetlet/busybox:1.35';
const NS = 'podcfg';
const SECRET_VALUE = 'pw-' + randomBytes(6).toString('hex');
const b64 = (s: string): string => Buffer.from(s).toString('base64');

/** Pods that read ConfigMaps, Secrets and the downward API, on a real agent and Docker engine. */
describe('pods with configuration', () => {
  let sut: Cluster;
  let kubectl: Kubectl;
  let node: string;

  before(async () => {
    const key = `k1:${randomBytes(32).toString('base64')}`;
    sut = await Cluster.start({ SECRET_ENCRYPTION_KEY: key });
    node = uniqueName('podcfg');
    await sut.startAgent(node, { SECRET_ENCRYPTION_KEY: key });
    kubectl = new Kubectl(sut.apiUrl);
    // hostPort is outside Pod Security's baseline: this namespace allows it, as a cluster admin would.
    const ns = { metadata: { name: NS, labels: { 'pod-security.kubernetes.io/enforce': 'privileged' } } };
    assert.equal((await sut.request('POST', '/api/v1/namespaces', ns)).status, 201);
  });

  after(async () => {
    kubectl?.dispose();
    await sut?.stop();
  });

  const create = async (kind: 'configmaps' | 'secrets', body: object): Promise<void> => {
    const { status, body: answer } = await sut.request('POST', `/api/v1/namespaces/${NS}/${kind}`, body);
    assert.equal(status, 201, JSON.stringify(answer));
  };
  const logs = async (pod: string, container?: string): Promise<string> =>
    (await fetch(`${sut.apiUrl}/api/v1/namespaces/${NS}/pods/${pod}/log${container ? `?container=${container}` : ''}`)).text();

  it('gives a container env from ConfigMaps, Secrets, the downward API and its resources', async () => {
    await create('configmaps', { metadata: { name: 'settings' }, data: { mode: 'fast', level: '3' } });
    await create('secrets', { metadata: { name: 'creds' }, data: { password: b64(SECRET_VALUE) } });
    await sut.createPod(NS, {
      metadata: { name: 'env-pod', labels: { team: 'blue' } },
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [
          {
            name: 'main',
            image: IMAGE,
            command: ['sh', '-c', 'env | sort; echo "cmd: $(GREETING)"; sleep 3600'],
            resources: { limits: { memory: '64Mi', cpu: '500m' } },
            envFrom: [{ prefix: 'CFG_', configMapRef: { name: 'settings' } }],
            env: [
              { name: 'GREETING', value: 'hello-$(CFG_mode)' },
              { name: 'PASSWORD', valueFrom: { secretKeyRef: { name: 'creds', key: 'password' } } },
              { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
              { name: 'POD_TEAM', valueFrom: { fieldRef: { fieldPath: "metadata.labels['team']" } } },
              { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
              { name: 'NODE', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } },
              { name: 'MEM_MI', valueFrom: { resourceFieldRef: { resource: 'limits.memory', divisor: '1Mi' } } },
              { name: 'CPU_M', valueFrom: { resourceFieldRef: { containerName: 'main', resource: 'limits.cpu', divisor: '1m' } } },
              { name: 'NOT_THERE', valueFrom: { secretKeyRef: { name: 'nope', key: 'x', optional: true } } },
            ],
          },
        ],
      },
    });
    const running = await sut.waitForRunning(NS, 'env-pod');
    const out = await sut.withLogs(
      waitFor('the env in the log', async () => ((await logs('env-pod')).includes('cmd: ') ? logs('env-pod') : undefined), 30_000),
    );
    for (const line of [
      'CFG_mode=fast',
      'CFG_level=3',
      'GREETING=hello-fast',
      `PASSWORD=${SECRET_VALUE}`,
      'POD_NAME=env-pod',
      'POD_TEAM=blue',
      `POD_IP=${running.status.podIP}`,
      `NODE=${node}`,
      'MEM_MI=64',
      'CPU_M=500',
      'cmd: hello-fast',
    ])
      assert.ok(out.split('\n').includes(line), `${line} in:\n${out}`);
    assert.doesNotMatch(out, /NOT_THERE/);
    // The defaults Kubernetes fills in show through kubectl.
    const env = (JSON.parse(await kubectl.ok(['-n', NS, 'get', 'pod', 'env-pod', '-o', 'json'])) as Pod).spec.containers[0]?.env ?? [];
    assert.deepEqual(env.find((e) => e.name === 'POD_NAME')?.valueFrom, { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } });
    assert.ok(!sut.logs().includes(SECRET_VALUE), 'no log line holds the secret');
  });

  it("waits with CreateContainerConfigError and Kubernetes' message until the key exists", async () => {
    await sut.createPod(NS, {
      metadata: { name: 'missing-key' },
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [
          { name: 'main', image: IMAGE, command: ['sleep', '3600'], env: [{ name: 'X', valueFrom: { configMapKeyRef: { name: 'settings', key: 'later' } } }] },
        ],
      },
    });
    const waiting = await sut.waitForPod(NS, 'missing-key', 'CreateContainerConfigError', (p) =>
      (p.status.containerStatuses ?? []).some((s) => s.state.waiting?.reason === 'CreateContainerConfigError'),
    );
    assert.equal(waiting.status.containerStatuses?.[0]?.state.waiting?.message, `couldn't find key later in ConfigMap ${NS}/settings`);
    assert.match(await kubectl.ok(['-n', NS, 'get', 'pod', 'missing-key']), /missing-key\s+0\/1\s+CreateContainerConfigError/);
    // Events travel apart from the status (the agent's outbox, then the API's projection): the status may come first.
    await waitFor('the Failed event', async () =>
      /Failed.*Error: couldn't find key later in ConfigMap/.test(
        await kubectl.ok(['-n', NS, 'get', 'events', '--field-selector', 'involvedObject.name=missing-key']),
      ),
    );
    await sut.request('PATCH', `/api/v1/namespaces/${NS}/configmaps/settings`, { data: { later: 'now' } }, 'application/merge-patch+json');
    await sut.waitForRunning(NS, 'missing-key');
  });

  it('refuses a bad env source with a 422 naming each field', async () => {
    const refused = async (env: object[], envFrom: object[] = []): Promise<string[]> => {
      const { status, body } = await sut.request<{ details: { causes: Array<{ field: string }> } }>('POST', `/api/v1/namespaces/${NS}/pods`, {
        metadata: { name: 'bad-env' },
        spec: { containers: [{ name: 'main', image: IMAGE, env, envFrom }] },
      });
      assert.equal(status, 422);
      return body.details.causes.map((c) => c.field).sort();
    };
    assert.deepEqual(await refused([{ name: 'C', valueFrom: { resourceFieldRef: { resource: 'limits.gpu' } } }]), [
      'spec.containers[0].env[0].valueFrom.resourceFieldRef.resource',
    ]);
    assert.deepEqual(
      await refused(
        [
          { name: 'A', value: 'x', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
          { name: 'B', valueFrom: { fieldRef: { fieldPath: 'spec.containers' } } },
          { name: 'D', valueFrom: {} },
        ],
        [{ configMapRef: { name: 'a' }, secretRef: { name: 'b' } }],
      ),
      [
        'spec.containers[0].envFrom[0]',
        'spec.containers[0].env[0].valueFrom',
        'spec.containers[0].env[1].valueFrom.fieldRef.fieldPath',
        'spec.containers[0].env[2].valueFrom',
      ],
    );
  });

  it('publishes a hostPort on the node, answered through the sandbox', async () => {
    const hostPort = await freePort();
    await sut.createPod(NS, {
      metadata: { name: 'host-port' },
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [
          {
            name: 'web',
            image: IMAGE,
            command: ['sh', '-c', 'mkdir -p /www && echo hostport-ok > /www/index.html && exec httpd -f -p 8080 -h /www'],
            ports: [{ containerPort: 8080, hostPort }],
          },
        ],
      },
    });
    await sut.waitForRunning(NS, 'host-port');
    const body = await sut.withLogs(
      waitFor(
        `an answer on 127.0.0.1:${hostPort}`,
        async () => {
          const response = await fetch(`http://127.0.0.1:${hostPort}/`).catch(() => undefined);
          return response?.ok ? response.text() : undefined;
        },
        30_000,
      ),
    );
    assert.equal(body.trim(), 'hostport-ok');
    const [sandbox] = await sut.docker.listContainers({
      filters: { label: [`io.jetlet.node=${node}`, 'io.jetlet.kind=sandbox', 'io.jetlet.pod.name=host-port'] },
    });
    assert.ok(
      sandbox?.Ports.some((p) => p.PublicPort === hostPort && p.PrivatePort === 8080),
      JSON.stringify(sandbox?.Ports),
    );
  });
});
