import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Cluster, uniqueName } from '../harness/cluster.js';
import { waitFor } from '../harness/processes.js';
import { parsePrometheusText } from '../harness/prometheus.js';

interface Run {
  code: number | null;
  stdout: Buffer;
  stderr: string;
}

const pod = (name: string, command: string[]): object => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { terminationGracePeriodSeconds: 1, containers: [{ name: 'main', image: 'jetlet/busybox:1.35', command }] },
});

/** The agent's bearer token: its Summary API shows pods, so it answers only with one. */
const AGENT_TOKEN = 'exec-e2e-agent-token';
const asAgentClient = { headers: { authorization: `Bearer ${AGENT_TOKEN}` } };

const md5 = (bytes: Buffer): string => createHash('md5').update(bytes).digest('hex');

/** Parses kubectl's `1234m` / `56Mi` columns. */
const millicores = (text: string): number => Number(/^(\d+)m$/.exec(text)?.[1] ?? NaN);
const mebibytes = (text: string): number => Number(/^(\d+)Mi$/.exec(text)?.[1] ?? NaN);

/** The real kubectl (v1.32) against the API: exec, attach and cp over WebSocket, port-forward over SPDY (tunnelled or not), relayed to the agent over NATS; and top. */
describe('kubectl exec, attach, cp, port-forward and top through the agent', () => {
  let cluster: Cluster;
  const node = uniqueName('exec-node');
  let dir: string;

  const start = (args: string[], stdin?: Buffer): ChildProcess => {
    const child = spawn('kubectl', ['--server', cluster.apiUrl, '--cache-dir', join(dir, 'cache'), ...args], {
      cwd: dir,
      env: { ...process.env, KUBECONFIG: join(dir, 'none') },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(stdin ?? Buffer.alloc(0));
    return child;
  };

  const collect = (child: ChildProcess, timeoutMs = 60_000): Promise<Run> => {
    const out: Buffer[] = [];
    let stderr = '';
    child.stdout?.on('data', (c: Buffer) => out.push(c));
    child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    return new Promise((resolve) =>
      child.once('close', (code) => {
        clearTimeout(timer);
        resolve({ code, stdout: Buffer.concat(out), stderr });
      }),
    );
  };

  const kubectl = (args: string[], stdin?: Buffer): Promise<Run> => collect(start(args, stdin));

  /** A gauge's value summed over its series, from an app's /metrics. */
  const gauge = async (url: string, name: string, labels: Record<string, string> = {}): Promise<number> => {
    const text = await (await fetch(`${url}/metrics`, asAgentClient)).text();
    return parsePrometheusText(text)
      .samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
      .reduce((sum, s) => sum + s.value, 0);
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'jetlet-exec-'));
    cluster = await Cluster.start();
    await cluster.startAgent(node, { AGENT_TOKEN: AGENT_TOKEN });
    await cluster.createPod('default', pod('shell', ['sleep', '3600']));
    await cluster.createPod('default', pod('ticker', ['sh', '-c', 'i=0; while true; do echo tick $i; i=$((i+1)); sleep 0.2; done']));
    // 40 MiB in the container's /dev/shm: memory charged to it that the page cache cannot give back.
    await cluster.createPod('default', pod('hog', ['sh', '-c', 'dd if=/dev/zero of=/dev/shm/fill bs=1M count=40 && while :; do :; done']));
    // Nothing ever runs in it but its sleep.
    await cluster.createPod('default', pod('idle', ['sleep', '3600']));
    // A web page on 8080 and an echo server on 9000 that serves connections side by side.
    await cluster.createPod(
      'default',
      pod('web', ['sh', '-c', 'mkdir /www && echo hello-from-pod > /www/index.html && httpd -p 8080 -h /www && exec nc -ll -p 9000 -e cat']),
    );
    for (const name of ['shell', 'ticker', 'hog', 'idle', 'web']) await cluster.waitForRunning('default', name, 120_000);
  });

  after(async () => {
    await cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs a command with its stdout and stderr apart, and hands its exit code to kubectl', async () => {
    const echo = await kubectl(['exec', 'shell', '--', 'echo', 'hello', 'world']);
    assert.equal(echo.code, 0, echo.stderr);
    assert.equal(echo.stdout.toString(), 'hello world\n');

    const failing = await kubectl(['exec', 'shell', '--', 'sh', '-c', 'echo out; echo err >&2; exit 3']);
    assert.equal(failing.code, 3, failing.stderr);
    assert.equal(failing.stdout.toString(), 'out\n');
    assert.match(failing.stderr, /^err\n/);
    assert.match(failing.stderr, /command terminated with exit code 3/);

    const missing = await kubectl(['exec', 'shell', '--', '/no/such/binary']);
    assert.equal(missing.code, 126, missing.stderr);
  });

  it('passes stdin through, closes it at its end, and carries bytes unchanged both ways', async () => {
    const blob = randomBytes(3 * 1024 * 1024 + 17);
    const counted = await kubectl(['exec', '-i', 'shell', '--', 'sh', '-c', 'cat > /tmp/blob && md5sum /tmp/blob'], blob);
    assert.equal(counted.code, 0, counted.stderr);
    assert.equal(counted.stdout.toString().split(' ')[0], md5(blob));

    const back = await kubectl(['exec', 'shell', '--', 'cat', '/tmp/blob']);
    assert.equal(back.code, 0, back.stderr);
    assert.equal(back.stdout.length, blob.length);
    assert.equal(md5(back.stdout), md5(blob));
  });

  it('gives exec -it a terminal that follows the client size, under a real pseudo-terminal', async () => {
    const command = `stty cols 123 rows 45; kubectl --server ${cluster.apiUrl} --cache-dir ${join(dir, 'cache')} exec -it shell -- sh -c 'tty; sleep 1; stty size; exit 4'`;
    const run = await collect(
      spawn('script', ['-qec', command, '/dev/null'], { env: { ...process.env, KUBECONFIG: join(dir, 'none') }, stdio: ['pipe', 'pipe', 'pipe'] }),
    );
    const text = run.stdout.toString();
    assert.equal(run.code, 4, text + run.stderr);
    assert.match(text, /\/dev\/pts\/\d+/);
    assert.match(text, /45 123/);
  });

  it('copies a file into the pod and back out with kubectl cp (tar over exec)', async () => {
    const blob = randomBytes(2 * 1024 * 1024 + 5);
    writeFileSync(join(dir, 'in.bin'), blob);
    const copyIn = await kubectl(['cp', 'in.bin', 'shell:/tmp/in.bin']);
    assert.equal(copyIn.code, 0, copyIn.stderr);
    const sum = await kubectl(['exec', 'shell', '--', 'md5sum', '/tmp/in.bin']);
    assert.equal(sum.stdout.toString().split(' ')[0], md5(blob));

    const copyOut = await kubectl(['cp', 'shell:/tmp/in.bin', 'out.bin']);
    assert.equal(copyOut.code, 0, copyOut.stderr);
    assert.equal(md5(readFileSync(join(dir, 'out.bin'))), md5(blob));
  });

  it('attaches to the output of a running container', async () => {
    const child = start(['attach', 'ticker']);
    let seen = '';
    child.stdout?.on('data', (c: Buffer) => (seen += c.toString()));
    const done = collect(child);
    await waitFor('ticks through attach', () => Promise.resolve(/tick \d+\ntick \d+\n/.test(seen)), 30_000);
    child.kill('SIGTERM');
    await done;
  });

  it('refuses what cannot be served with a Status kubectl prints', async () => {
    const badContainer = await kubectl(['exec', 'shell', '-c', 'nope', '--', 'true']);
    assert.notEqual(badContainer.code, 0);
    assert.match(badContainer.stderr, /container nope is not valid for pod shell/);
    const spdy = await fetch(`${cluster.apiUrl}/api/v1/namespaces/default/pods/shell/exec?command=true&stdout=true`, { method: 'POST' });
    assert.equal(spdy.status, 400);
    assert.match(((await spdy.json()) as { message: string }).message, /WebSocket/);
    const none = await fetch(`${cluster.apiUrl}/api/v1/namespaces/default/pods/nosuch/exec?command=true&stdout=true`);
    assert.equal(none.status, 404);
    assert.deepEqual(((await none.json()) as { details: unknown }).details, { name: 'nosuch', kind: 'pods' });
  });

  it('tears a stream down when its client goes away: no process, stream or subscription is left', async () => {
    const marker = `sleep ${1000 + Math.floor(Math.random() * 1000)}`;
    const child = start(['exec', 'shell', '--', ...marker.split(' ')]);
    const done = collect(child);
    const processes = async (): Promise<string> => (await kubectl(['exec', 'shell', '--', 'ps', '-o', 'args'])).stdout.toString();
    await waitFor('the exec to run in the container', async () => (await processes()).includes(marker), 30_000);
    // The other execs of this test (ps) end a moment after kubectl has their output.
    await waitFor(
      'exactly this stream to be open on both sides',
      async () =>
        (await gauge(cluster.agentUrl(node), 'jetlet_pod_streams', { kind: 'exec' })) === 1 &&
        (await gauge(cluster.apiUrl, 'jetlet_api_pod_stream_subscriptions')) === 1,
      30_000,
    );

    child.kill('SIGKILL');
    await done;
    await waitFor(
      'the stream to be gone on both sides',
      async () =>
        (await gauge(cluster.agentUrl(node), 'jetlet_pod_streams', { kind: 'exec' })) === 0 &&
        (await gauge(cluster.apiUrl, 'jetlet_api_pod_stream_subscriptions')) === 0,
      30_000,
    );
    await waitFor('the process to be killed', async () => !(await processes()).includes(marker), 30_000);
    // Every exec the tests ran has ended: Docker lists none running in the container.
    const [container] = (await cluster.containersOf(node)).filter(
      (c) => c.Labels['io.jetlet.pod.name'] === 'shell' && c.Labels['io.jetlet.kind'] === 'container',
    );
    assert.ok(container);
    const execIds = (await cluster.docker.getContainer(container.Id).inspect()).ExecIDs ?? [];
    const running = await Promise.all(execIds.map(async (id) => (await cluster.docker.getExec(id).inspect()).Running));
    assert.deepEqual(
      running.filter((r) => r),
      [],
    );
  });

  /** Starts `kubectl port-forward`; resolves with the local port of each remote one once kubectl listens. */
  const portForward = async (
    remotePorts: number[],
    env: NodeJS.ProcessEnv = {},
  ): Promise<{ child: ChildProcess; done: Promise<Run>; local: Map<number, number>; output: () => string }> => {
    const child = spawn(
      'kubectl',
      ['--server', cluster.apiUrl, '--cache-dir', join(dir, 'cache'), 'port-forward', '--address=127.0.0.1', 'pod/web', ...remotePorts.map((p) => `:${p}`)],
      { cwd: dir, env: { ...process.env, KUBECONFIG: join(dir, 'none'), ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let text = '';
    child.stdout?.on('data', (c: Buffer) => (text += c.toString()));
    child.stderr?.on('data', (c: Buffer) => (text += c.toString()));
    const done = collect(child, 300_000);
    const local = await waitFor(
      'kubectl to listen on every port',
      () => {
        const found = new Map([...text.matchAll(/Forwarding from 127\.0\.0\.1:(\d+) -> (\d+)/g)].map((m) => [Number(m[2]), Number(m[1])]));
        return Promise.resolve(remotePorts.every((p) => found.has(p)) ? found : undefined);
      },
      60_000,
    );
    return { child, done, local, output: () => text };
  };

  /** Sends `bytes` on a new connection to a local port and reads the answer until the other side ends. */
  const exchange = (port: number, bytes: Buffer, halfClose = true): Promise<Buffer> =>
    new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1');
      const back: Buffer[] = [];
      socket.on('data', (c: Buffer) => back.push(c));
      socket.once('error', reject);
      socket.once('close', () => resolve(Buffer.concat(back)));
      socket.write(bytes);
      if (halfClose) socket.end();
    });

  const portForwardGauges = async (): Promise<{ connections: number; subscriptions: number; agentStreams: number }> => ({
    connections: await gauge(cluster.apiUrl, 'jetlet_api_port_forward_connections'),
    subscriptions: await gauge(cluster.apiUrl, 'jetlet_api_pod_stream_subscriptions'),
    agentStreams: await gauge(cluster.agentUrl(node), 'jetlet_pod_streams', { kind: 'portforward' }),
  });

  it('forwards local ports to the pod over the WebSocket tunnel: a web page, and concurrent connections carrying bytes both ways', async () => {
    const forward = await portForward([8080, 9000]);
    try {
      const page = await fetch(`http://127.0.0.1:${forward.local.get(8080)}/index.html`);
      assert.equal(page.status, 200);
      assert.equal(await page.text(), 'hello-from-pod\n');
      assert.equal(await gauge(cluster.apiUrl, 'jetlet_api_port_forward_connections', { transport: 'websocket' }), 1);

      const blobs = Array.from({ length: 4 }, (_, i) => randomBytes(1024 * 1024 + i));
      const echoed = await Promise.all(blobs.map((blob) => exchange(forward.local.get(9000) ?? 0, blob)));
      assert.deepEqual(
        echoed.map((b) => md5(b)),
        blobs.map((b) => md5(b)),
      );
      // Every forwarded connection is over on both sides; the port-forward itself goes on.
      await waitFor('the forwarded connections to end', async () => (await portForwardGauges()).agentStreams === 0, 30_000);
      assert.deepEqual(await portForwardGauges(), { connections: 1, subscriptions: 0, agentStreams: 0 });
    } finally {
      forward.child.kill('SIGKILL');
    }
    await forward.done;
    await waitFor('the port-forward connection to be gone', async () => (await portForwardGauges()).connections === 0, 30_000);
  });

  it('forwards over plain SPDY when kubectl does not tunnel, tears down a connection its client drops, and reports a closed port as kubectl expects', async () => {
    const forward = await portForward([8080, 9000, 81], { KUBECTL_PORT_FORWARD_WEBSOCKETS: 'false' });
    try {
      const page = await fetch(`http://127.0.0.1:${forward.local.get(8080)}/`);
      assert.equal(await page.text(), 'hello-from-pod\n');
      assert.equal(await gauge(cluster.apiUrl, 'jetlet_api_port_forward_connections', { transport: 'spdy' }), 1);

      // A client that drops its connection mid-stream: the agent's stream and the API's subscription go.
      const socket = connect(forward.local.get(9000) ?? 0, '127.0.0.1');
      socket.on('error', () => undefined);
      let echoed = '';
      socket.on('data', (c: Buffer) => (echoed += c.toString()));
      socket.write('still here\n');
      await waitFor('the echo through the held connection', () => echoed === 'still here\n', 30_000);
      assert.equal((await portForwardGauges()).agentStreams, 1);
      socket.destroy();
      await waitFor(
        'the dropped connection to be torn down',
        async () => {
          const g = await portForwardGauges();
          return g.agentStreams === 0 && g.subscriptions === 0;
        },
        30_000,
      );

      // Nothing listens on 81: kubectl prints the node's error and gives up on the pod (kubectl 1.32's behaviour).
      const refused = await exchange(forward.local.get(81) ?? 0, Buffer.from('hello'), false);
      assert.equal(refused.length, 0);
      const run = await forward.done;
      assert.notEqual(run.code, 0);
      assert.match(
        forward.output(),
        /an error occurred forwarding \d+ -> 81: error forwarding port 81 to pod default\/web, uid [-0-9a-f]+: dial tcp [0-9.]+:81: connect: connection refused/,
      );
      assert.match(forward.output(), /lost connection to pod/);
    } finally {
      forward.child.kill('SIGKILL');
    }
    await waitFor(
      'nothing of the port-forward to be left',
      async () => {
        const g = await portForwardGauges();
        return g.connections === 0 && g.subscriptions === 0 && g.agentStreams === 0;
      },
      30_000,
    );

    // Neither path serves a plain request, nor a SPDY client that speaks another stream protocol.
    const plain = await fetch(`${cluster.apiUrl}/api/v1/namespaces/default/pods/web/portforward`, { method: 'POST' });
    assert.equal(plain.status, 400);
    const missing = await fetch(`${cluster.apiUrl}/api/v1/namespaces/default/pods/nosuch/portforward`, { method: 'POST' });
    assert.equal(missing.status, 404);
  });

  it('shows pod and node usage with kubectl top, as Docker measures it', async () => {
    const discovery = (await (await fetch(`${cluster.apiUrl}/apis`)).json()) as { groups: Array<{ name: string }> };
    assert.ok(discovery.groups.some((g) => g.name === 'metrics.k8s.io'));

    // Two samples make a rate: the pods show up once the agent has sampled them twice.
    const top = await waitFor(
      'kubectl top pod to list every pod',
      async () => {
        const run = await kubectl(['top', 'pod', '--no-headers']);
        const rows = new Map(
          run.stdout
            .toString()
            .trim()
            .split('\n')
            .map((line) => line.trim().split(/\s+/))
            .map(([name = '', cpu = '', memory = '']) => [name, { cpu: millicores(cpu), memory: mebibytes(memory) }]),
        );
        return run.code === 0 && ['shell', 'ticker', 'hog', 'idle', 'web'].every((n) => rows.has(n)) ? rows : undefined;
      },
      60_000,
      1_000,
    );
    const hog = top.get('hog');
    assert.ok(hog && hog.cpu > 50, `a busy loop uses CPU: ${JSON.stringify(hog)}`);
    assert.ok((top.get('idle')?.cpu ?? NaN) < 20, `sleep uses next to none: ${JSON.stringify(top.get('idle'))}`);

    // Docker's own figure, as its CLI computes it: usage minus inactive file cache.
    const [container] = (await cluster.containersOf(node)).filter(
      (c) => c.Labels['io.jetlet.pod.name'] === 'hog' && c.Labels['io.jetlet.kind'] === 'container',
    );
    assert.ok(container);
    const stats = (await cluster.docker.getContainer(container.Id).stats({ stream: false })) as unknown as {
      memory_stats: { usage: number; stats: Record<string, number> };
    };
    const dockerMiB =
      (stats.memory_stats.usage - (stats.memory_stats.stats['total_inactive_file'] ?? stats.memory_stats.stats['inactive_file'] ?? 0)) / 2 ** 20;
    assert.ok(Math.abs(hog.memory - dockerMiB) <= 2, `kubectl top says ${hog.memory}Mi, docker ${dockerMiB.toFixed(1)}Mi`);
    assert.ok(hog.memory >= 40);

    const nodes = await kubectl(['top', 'node', '--no-headers']);
    assert.equal(nodes.code, 0, nodes.stderr);
    const [name, cpu = '', , memory = ''] = nodes.stdout.toString().trim().split(/\s+/);
    assert.equal(name, node);
    assert.ok(millicores(cpu) > 0 && mebibytes(memory) > 40, nodes.stdout.toString());

    const summary = (await (await fetch(`${cluster.agentUrl(node)}/stats/summary`, asAgentClient)).json()) as { pods: Array<{ podRef: { name: string } }> };
    assert.deepEqual(summary.pods.map((p) => p.podRef.name).sort(), ['hog', 'idle', 'shell', 'ticker', 'web']);
    const resource = await (await fetch(`${cluster.agentUrl(node)}/metrics/resource`, asAgentClient)).text();
    assert.match(resource, /^pod_memory_working_set_bytes\{namespace="default",pod="hog"\} \d+ \d+$/m);
  });
});
