import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Pod } from '#contracts';
import { Cluster, uniqueName } from '../harness/cluster.js';
import { waitFor } from '../harness/processes.js';

const BUSYBOX = 'jetlet/busybox:1.35';

const statusOf = (pod: Pod, name: string) => pod.status.containerStatuses?.find((s) => s.name === name);

/** Resource limits, OOM kills and the pod's shared network, after the kubelet's node e2e tests. */
describe('the agent: resources and the pod network', () => {
  let cluster: Cluster;

  before(async () => {
    cluster = await Cluster.start();
  });

  after(async () => {
    await cluster?.stop();
  });

  it('applies limits and requests to the Docker container: Memory, NanoCpus, CpuShares', { timeout: 120_000 }, async (t) => {
    const node = uniqueName('res-limits');
    cluster.cleanUpAfter(t, node);
    await cluster.startAgent(node);
    await cluster.createPod('default', {
      metadata: { name: 'limited' },
      spec: {
        nodeName: node,
        terminationGracePeriodSeconds: 1,
        containers: [
          {
            name: 'main',
            image: BUSYBOX,
            command: ['sh', '-c', "trap 'exit 0' TERM; sleep 3600 & wait"],
            resources: { requests: { cpu: '250m', memory: '16Mi' }, limits: { cpu: '500m', memory: '32Mi' } },
          },
        ],
      },
    });
    const pod = await cluster.waitForRunning('default', 'limited');
    const id = statusOf(pod, 'main')?.containerID?.replace('docker://', '');
    assert.ok(id, 'the running container has an id');
    const info = await cluster.docker.getContainer(id).inspect();
    assert.equal(info.HostConfig.Memory, 32 * 1024 * 1024);
    assert.equal(info.HostConfig.NanoCpus, 500_000_000);
    assert.equal(info.HostConfig.CpuShares, 256, 'requests.cpu 250m is 256 shares, as the kubelet computes them');
    assert.equal(info.Config.Labels['io.jetlet.pod.uid'], pod.metadata.uid);
  });

  it('reports a container killed for exceeding its memory limit as OOMKilled, and says so on the bus', { timeout: 120_000 }, async (t) => {
    const node = uniqueName('res-oom');
    cluster.cleanUpAfter(t, node);
    await cluster.startAgent(node);
    const events = await cluster.watchContainerEvents(node);
    t.after(() => events.close());
    const created = await cluster.createPod('default', {
      metadata: { name: 'memory-hog' },
      spec: {
        nodeName: node,
        restartPolicy: 'Never',
        terminationGracePeriodSeconds: 1,
        // tail keeps the whole newline-free input in memory: 200 MB against a 32 MiB limit.
        containers: [
          { name: 'hog', image: BUSYBOX, command: ['sh', '-c', 'head -c 200m /dev/zero | tail'], resources: { limits: { memory: '32Mi', cpu: '500m' } } },
        ],
      },
    });

    const pod = await cluster.waitForPod(
      'default',
      'memory-hog',
      'to show the container terminated',
      (p) => statusOf(p, 'hog')?.state.terminated !== undefined || statusOf(p, 'hog')?.lastState.terminated !== undefined,
      60_000,
    );
    const status = statusOf(pod, 'hog')!;
    const terminated = status.state.terminated ?? status.lastState.terminated!;
    assert.equal(terminated.reason, 'OOMKilled', `terminated: ${JSON.stringify(terminated)}`);
    assert.equal(terminated.exitCode, 137);
    assert.equal(pod.status.phase, 'Failed', 'an OOM-killed container under restartPolicy Never fails the pod');

    const id = (terminated.containerID ?? status.containerID ?? '').replace('docker://', '');
    const info = await cluster.docker.getContainer(id).inspect();
    assert.equal(info.State.OOMKilled, true, 'Docker recorded the OOM kill');
    assert.equal(info.HostConfig.Memory, 33_554_432);
    assert.equal(info.HostConfig.NanoCpus, 5e8);

    const event = await events.waitFor(
      `OOMKilled (or Died with 137) for ${id.slice(0, 12)}`,
      (e) =>
        e.data.uid === created.metadata.uid &&
        e.data.containerID === `docker://${id}` &&
        (e.data.reason === 'OOMKilled' || (e.data.reason === 'Died' && e.data.exitCode === 137)),
    );
    assert.equal(event.data.containerName, 'hog');
    assert.equal(event.correlationId, created.metadata.uid);
  });

  it(
    "runs a pod's containers in the sandbox's network namespace: localhost reaches a sibling, and every container has the pod IP",
    { timeout: 120_000 },
    async (t) => {
      const node = uniqueName('res-net');
      cluster.cleanUpAfter(t, node);
      await cluster.startAgent(node);
      const secret = randomBytes(8).toString('hex');
      await cluster.createPod('default', {
        metadata: { name: 'shared-net' },
        spec: {
          nodeName: node,
          terminationGracePeriodSeconds: 1,
          containers: [
            {
              name: 'server',
              image: BUSYBOX,
              command: ['sh', '-c', `mkdir -p /www && echo ${secret} > /www/secret.txt && exec httpd -f -p 8080 -h /www`],
              ports: [{ containerPort: 8080 }],
            },
            {
              name: 'client',
              image: BUSYBOX,
              command: ['sh', '-c', "trap 'exit 0' TERM; until wget -qO- http://localhost:8080/secret.txt; do sleep 1; done; echo fetched; sleep 3600 & wait"],
            },
          ],
        },
      });
      const pod = await cluster.waitForRunning('default', 'shared-net');
      const podIP = pod.status.podIP!;
      const clientId = statusOf(pod, 'client')!.containerID!.replace('docker://', '');
      const serverId = statusOf(pod, 'server')!.containerID!.replace('docker://', '');

      const logs = await cluster.withLogs(
        waitFor(
          'the client to have fetched the file over localhost',
          async () => {
            const out = await cluster.dockerCli('logs', clientId);
            return out.stdout.includes('fetched') ? out.stdout : undefined;
          },
          30_000,
          500,
        ),
      );
      assert.ok(logs.includes(secret), `the client printed the server's file: ${logs}`);

      for (const [name, id] of [
        ['server', serverId],
        ['client', clientId],
      ] as const) {
        const exec = await cluster.dockerCli('exec', id, 'hostname', '-i');
        assert.equal(exec.code, 0, `hostname -i in ${name}: ${exec.stderr}`);
        const ipv4 = exec.stdout
          .trim()
          .split(/\s+/)
          .filter((a) => /^\d+\.\d+\.\d+\.\d+$/.test(a));
        assert.deepEqual(ipv4, [podIP], `${name} has the pod IP`);
        const info = await cluster.docker.getContainer(id).inspect();
        assert.match(info.HostConfig.NetworkMode ?? '', /^container:[0-9a-f]{64}$/, `${name} joins another container's network`);
      }
      const sandbox = (await cluster.podContainers(node, pod.metadata.uid!)).find((c) => c.Labels['io.jetlet.kind'] === 'sandbox');
      assert.ok(sandbox);
      const serverInfo = await cluster.docker.getContainer(serverId).inspect();
      assert.equal(serverInfo.HostConfig.NetworkMode, `container:${sandbox.Id}`, "the app containers join the pod's sandbox");
    },
  );
});
