import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { connect } from '@nats-io/transport-node';
import { token, type Pod } from '#contracts';
import { Cluster, uniqueName } from '../harness/cluster.js';
import { waitFor } from '../harness/processes.js';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

const manifest = (name: string, labels: Record<string, string>, extra: Record<string, unknown> = {}): object => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, labels },
  spec: {
    terminationGracePeriodSeconds: 2,
    containers: [{ name: 'main', image: 'jetlet/busybox:1.35', command: ['sleep', '3600'], ...extra }],
  },
});

/** The real kubectl (v1.32, on PATH) against a running API, scheduler and agent: reading, selecting, watching. */
describe('kubectl reads, selects and watches', () => {
  let cluster: Cluster;
  const node = uniqueName('kubectl-node');
  let dir: string;

  /** Runs kubectl against this cluster with no kubeconfig of the machine's; never hangs past `timeoutMs`. */
  const kubectl = (args: string[], timeoutMs = 60_000): Promise<Run> => {
    const child = spawn('kubectl', ['--server', cluster.apiUrl, '--cache-dir', join(dir, 'cache'), ...args], {
      env: { ...process.env, KUBECONFIG: join(dir, 'none') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return collect(child, timeoutMs);
  };

  const collect = (child: ChildProcess, timeoutMs: number): Promise<Run> => {
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    return new Promise((resolve) =>
      child.once('close', (code) => {
        clearTimeout(timer);
        resolve({ code, stdout, stderr });
      }),
    );
  };

  const file = (name: string, body: object): string => {
    const path = join(dir, `${name}.json`);
    writeFileSync(path, JSON.stringify(body));
    return path;
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'jetlet-kubectl-'));
    cluster = await Cluster.start();
    await cluster.startAgent(node);
    await cluster.createPod('default', manifest('alpha-1', { app: 'alpha', tier: 'front' }));
    await cluster.createPod('default', manifest('alpha-2', { app: 'alpha', tier: 'back' }));
    await cluster.createPod('default', manifest('beta-1', { app: 'beta' }));
    // Running, never Ready: its readiness probe always fails.
    await cluster.createPod(
      'default',
      manifest('unready', { app: 'gamma' }, { readinessProbe: { exec: { command: ['false'] }, periodSeconds: 1, failureThreshold: 1 } }),
    );
    for (const name of ['alpha-1', 'alpha-2', 'beta-1', 'unready']) await cluster.waitForRunning('default', name, 120_000);
  });

  after(async () => {
    await cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('prints pods and nodes with kubectl columns, in every output format', async () => {
    const table = await kubectl(['get', 'pods']);
    assert.equal(table.code, 0, table.stderr);
    const [header, ...rows] = table.stdout.trim().split('\n');
    assert.match(header ?? '', /^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE$/);
    assert.match(rows.find((r) => r.startsWith('alpha-1 ')) ?? '', /^alpha-1\s+1\/1\s+Running\s+0\s+\d+s$/);
    assert.match(rows.find((r) => r.startsWith('unready ')) ?? '', /^unready\s+0\/1\s+Running\s+0\s+/);

    const wide = await kubectl(['get', 'pods', '-o', 'wide']);
    assert.match(wide.stdout.split('\n')[0] ?? '', /^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\s+IP\s+NODE\s+NOMINATED NODE\s+READINESS GATES$/);
    assert.match(wide.stdout, new RegExp(`alpha-1\\s+1/1\\s+Running\\s+0\\s+\\S+\\s+\\d+\\.\\d+\\.\\d+\\.\\d+\\s+${node}\\s+<none>\\s+<none>`));

    const nodes = await kubectl(['get', 'nodes']);
    assert.match(nodes.stdout.split('\n')[0] ?? '', /^NAME\s+STATUS\s+ROLES\s+AGE\s+VERSION$/);
    assert.match(nodes.stdout, new RegExp(`${node}\\s+Ready\\s+<none>\\s+\\S+\\s+\\S+`));
    const nodesWide = await kubectl(['get', 'nodes', '-o', 'wide']);
    assert.match(
      nodesWide.stdout.split('\n')[0] ?? '',
      /^NAME\s+STATUS\s+ROLES\s+AGE\s+VERSION\s+INTERNAL-IP\s+EXTERNAL-IP\s+OS-IMAGE\s+KERNEL-VERSION\s+CONTAINER-RUNTIME$/,
    );

    const json = await kubectl(['get', 'pod', 'alpha-1', '-o', 'json']);
    assert.equal((JSON.parse(json.stdout) as Pod).metadata.name, 'alpha-1');
    const yaml = await kubectl(['get', 'pods', '-o', 'yaml']);
    assert.equal((parseYaml(yaml.stdout) as { kind: string; items: Pod[] }).kind, 'List');
    const name = await kubectl(['get', 'pods', '-o', 'name']);
    assert.deepEqual(name.stdout.trim().split('\n').sort(), ['pod/alpha-1', 'pod/alpha-2', 'pod/beta-1', 'pod/unready']);
    const jsonpath = await kubectl(['get', 'pod', 'beta-1', '-o', 'jsonpath={.spec.nodeName}']);
    assert.equal(jsonpath.stdout, node);
    const columns = await kubectl(['get', 'pods', '-o', 'custom-columns=N:.metadata.name,APP:.metadata.labels.app', '--sort-by=.metadata.name']);
    assert.match(columns.stdout, /^N\s+APP\nalpha-1\s+alpha\nalpha-2\s+alpha\nbeta-1\s+beta\nunready\s+gamma\n$/);
    const labels = await kubectl(['get', 'pods', '--show-labels', '-l', 'app=beta']);
    assert.match(labels.stdout, /beta-1\s+1\/1\s+Running\s+0\s+\S+\s+app=beta/);
    const events = await kubectl(['get', 'events', '--field-selector', 'involvedObject.name=beta-1']);
    assert.equal(events.code, 0, events.stderr);
    assert.match(events.stdout.split('\n')[0] ?? '', /^LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE$/);
    assert.match(events.stdout, /Normal\s+Started\s+pod\/beta-1/);
  });

  it('acts only on the pods -l and --field-selector choose', async () => {
    const byLabel = await kubectl(['get', 'pods', '-l', 'app=alpha,tier!=back', '-o', 'name']);
    assert.equal(byLabel.stdout.trim(), 'pod/alpha-1');
    const bySet = await kubectl(['get', 'pods', '-l', 'app in (alpha,beta),!tier', '-o', 'name']);
    assert.equal(bySet.stdout.trim(), 'pod/beta-1');
    const byField = await kubectl(['get', 'pods', '--field-selector', `metadata.name=alpha-2,spec.nodeName=${node},status.phase=Running`, '-o', 'name']);
    assert.equal(byField.stdout.trim(), 'pod/alpha-2');
    const none = await kubectl(['get', 'pods', '-l', 'app=nothing']);
    assert.equal(none.code, 0);
    assert.match(none.stderr, /No resources found in default namespace/);
    const unsupported = await kubectl(['get', 'pods', '--field-selector', 'spec.color=red']);
    assert.notEqual(unsupported.code, 0);
    assert.match(unsupported.stderr, /field label not supported: spec.color/);

    const labelled = await kubectl(['label', 'pods', '-l', 'app=alpha', 'reviewed=yes']);
    assert.equal(labelled.code, 0, labelled.stderr);
    assert.deepEqual(labelled.stdout.trim().split('\n').sort(), ['pod/alpha-1 labeled', 'pod/alpha-2 labeled']);
    assert.equal((await cluster.getPod('default', 'beta-1'))?.metadata.labels?.reviewed, undefined);
    assert.equal((await cluster.getPod('default', 'unready'))?.metadata.labels?.reviewed, undefined);
    assert.equal((await cluster.getPod('default', 'alpha-2'))?.metadata.labels?.reviewed, 'yes');
  });

  it('writes nothing with --dry-run=server', async () => {
    const path = file('dry', manifest('dry', { app: 'dry' }));
    const created = await kubectl(['create', '--validate=false', '-f', path, '--dry-run=server']);
    assert.equal(created.code, 0, created.stderr);
    assert.match(created.stdout, /pod\/dry created \(server dry run\)/);
    assert.equal(await cluster.getPod('default', 'dry'), undefined);
    const deleted = await kubectl(['delete', 'pod', 'beta-1', '--dry-run=server']);
    assert.equal(deleted.code, 0, deleted.stderr);
    assert.match(deleted.stdout, /pod "beta-1" deleted \(server dry run\)/);
    const labelled = await kubectl(['label', 'pod', 'beta-1', 'dry=yes', '--dry-run=server']);
    assert.equal(labelled.code, 0, labelled.stderr);
    const beta = await cluster.getPod('default', 'beta-1');
    assert.equal(beta?.metadata.deletionTimestamp, undefined);
    assert.equal(beta?.metadata.labels?.dry, undefined);
  });

  it('waits for Ready on the pod it names, and times out on the one that is not', async () => {
    const ready = await kubectl(['wait', '--for=condition=Ready', 'pod/alpha-1', '--timeout=60s']);
    assert.equal(ready.code, 0, ready.stderr);
    assert.equal(ready.stdout.trim(), 'pod/alpha-1 condition met');
    const unready = await kubectl(['wait', '--for=condition=Ready', 'pod/unready', '--timeout=3s']);
    assert.notEqual(unready.code, 0);
    assert.match(unready.stderr, /timed out waiting for the condition on pods\/unready/);
    assert.doesNotMatch(unready.stdout, /condition met/);
  });

  it('watches a pod go Pending, Running, Terminating and away, and deletes with --wait', async () => {
    const child = spawn(
      'kubectl',
      [
        '--server',
        cluster.apiUrl,
        '--cache-dir',
        join(dir, 'cache'),
        '-v=6',
        'get',
        'pods',
        '-l',
        'app=watched',
        '-w',
        '--output-watch-events',
        '--no-headers',
      ],
      { env: { ...process.env, KUBECONFIG: join(dir, 'none') }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const watching = collect(child, 120_000);
    let lines = '';
    let log = '';
    child.stdout?.on('data', (c: Buffer) => (lines += c.toString()));
    child.stderr?.on('data', (c: Buffer) => (log += c.toString()));
    try {
      // Create the pod only once kubectl watches (its -v=6 log shows the watch request), so it sees it Pending.
      await waitFor('kubectl -w to start its watch', () => /GET \S+watch=true\S* 200 OK/.test(log), 60_000);
      await cluster.createPod('default', manifest('watched', { app: 'watched' }));
      await waitFor('kubectl -w to show the pod Running', () => /MODIFIED\s+watched\s+1\/1\s+Running/.test(lines), 60_000);
      const deleted = await kubectl(['delete', 'pod', 'watched', '--wait=true', '--timeout=60s']);
      assert.equal(deleted.code, 0, deleted.stderr);
      assert.equal(deleted.stderr, '');
      assert.match(deleted.stdout, /pod "watched" deleted/);
      assert.equal(await cluster.getPod('default', 'watched'), undefined, 'delete --wait returned only once the pod was gone');
      await waitFor('kubectl -w to show the pod DELETED', () => /DELETED\s+watched/.test(lines), 30_000);
    } finally {
      child.kill('SIGTERM');
    }
    const run = await watching;
    const statuses = run.stdout
      .trim()
      .split('\n')
      .map((l) => l.split(/\s+/))
      .map(([event, , , status]) => `${event}:${status}`);
    const order = ['ADDED:Pending', 'Running', 'Terminating', 'DELETED'];
    let at = 0;
    for (const step of order) {
      const found = statuses.findIndex((s, i) => i >= at && (s === step || s.endsWith(`:${step}`) || s.startsWith(`${step}:`)));
      assert.ok(found >= 0, `kubectl -w showed ${step} after ${order[order.indexOf(step) - 1] ?? 'the start'}: ${statuses.join(' ')}`);
      at = found;
    }
    assert.doesNotMatch(run.stderr, /^[EW]\d{4} /m, 'kubectl logged no warning or error');
  });

  it('pages lists with --chunk-size and limit/continue on one snapshot, and watches namespaces', async () => {
    const chunked = await kubectl(['get', 'pods', '--chunk-size=1', '-o', 'name', '-v=6']);
    assert.equal(chunked.code, 0, chunked.stderr);
    assert.deepEqual(chunked.stdout.trim().split('\n'), ['pod/alpha-1', 'pod/alpha-2', 'pod/beta-1', 'pod/unready']);
    assert.match(chunked.stderr, /continue=/, 'kubectl followed the continue tokens');
    const table = await kubectl(['get', 'pods', '--chunk-size=3']);
    assert.deepEqual(
      table.stdout
        .trim()
        .split('\n')
        .map((l) => l.split(/\s+/)[0]),
      ['NAME', 'alpha-1', 'alpha-2', 'beta-1', 'unready'],
    );

    type List = { metadata: { resourceVersion: string; continue?: string; remainingItemCount?: number }; items: Pod[] };
    const list = async (query: string): Promise<{ status: number; body: List & { reason?: string } }> => {
      const response = await fetch(`${cluster.apiUrl}/api/v1/namespaces/default/pods?${query}`);
      return { status: response.status, body: (await response.json()) as List & { reason?: string } };
    };
    const first = await list('limit=2');
    assert.deepEqual(
      first.body.items.map((p) => p.metadata.name),
      ['alpha-1', 'alpha-2'],
    );
    assert.equal(first.body.metadata.remainingItemCount, 2);
    // A pod created between pages is not in the rest of that list: it continues from the first page's snapshot.
    await cluster.createPod('default', manifest('zz-late', { app: 'late' }));
    const rest = await list(`limit=10&continue=${first.body.metadata.continue ?? ''}`);
    assert.equal(rest.status, 200);
    assert.deepEqual(
      rest.body.items.map((p) => p.metadata.name),
      ['beta-1', 'unready'],
    );
    assert.equal(rest.body.metadata.resourceVersion, first.body.metadata.resourceVersion);
    assert.equal(rest.body.metadata.continue, undefined);
    assert.ok((await list('limit=10')).body.items.some((p) => p.metadata.name === 'zz-late'));
    const selectedPage = await list(`labelSelector=app%3Dalpha&limit=1`);
    assert.deepEqual(
      selectedPage.body.items.map((p) => p.metadata.name),
      ['alpha-1'],
    );
    assert.deepEqual(
      (await list(`labelSelector=app%3Dalpha&limit=1&continue=${selectedPage.body.metadata.continue ?? ''}`)).body.items.map((p) => p.metadata.name),
      ['alpha-2'],
    );
    const bad = await list('limit=1&continue=not-a-token');
    assert.equal(bad.status, 400);

    // Namespaces are watchable: a namespace created after the list arrives as ADDED.
    const namespaces = (await (await fetch(`${cluster.apiUrl}/api/v1/namespaces`)).json()) as List;
    const name = uniqueName('watched-ns');
    const controller = new AbortController();
    const response = await fetch(`${cluster.apiUrl}/api/v1/watch/namespaces?resourceVersion=${namespaces.metadata.resourceVersion}`, {
      signal: controller.signal,
    });
    assert.equal(response.status, 200);
    let frames = '';
    const reading = (async () => {
      const decoder = new TextDecoder();
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) frames += decoder.decode(chunk);
    })().catch(() => undefined);
    try {
      const created = await kubectl(['create', 'namespace', name]);
      assert.equal(created.code, 0, created.stderr);
      await waitFor(
        'the namespace watch to show the new namespace',
        () =>
          frames.includes(`"type":"ADDED","object":{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"${name}"`) ||
          new RegExp(`"type":"ADDED".*"name":"${name}"`).test(frames),
        30_000,
      );
    } finally {
      controller.abort();
      await reading;
    }
    const listedNs = await kubectl(['get', 'namespaces', '--chunk-size=2', '-o', 'name']);
    assert.ok(listedNs.stdout.split('\n').includes(`namespace/${name}`), listedNs.stdout);
  });

  it('aggregates the repeats of a crash-looping pod into one Event whose count grows, without a message per repeat', { timeout: 240_000 }, async () => {
    // An agent whose crash back-off is 1 s, so the pod restarts every second or two.
    const fast = uniqueName('kubectl-crash');
    await cluster.startAgent(fast, { BACKOFF_BASE_SECONDS: '1', BACKOFF_CAP_SECONDS: '1' });
    // Every PodEvent message about the pod that reaches the bus, by reason.
    const nc = await connect({ servers: cluster.nats.url });
    const published = new Map<string, number>();
    nc.subscribe(`jetlet.events.${token(fast)}.>`, {
      callback: (error, msg) => {
        if (error) return;
        const envelope = msg.json<{ type: string; data: { name?: string; reason?: string } }>();
        if (envelope.type === 'PodEvent' && envelope.data.name === 'crasher') {
          published.set(envelope.data.reason ?? '', (published.get(envelope.data.reason ?? '') ?? 0) + 1);
        }
      },
    });
    await nc.flush();
    try {
      await cluster.createPod('default', {
        metadata: { name: 'crasher' },
        spec: { nodeName: fast, terminationGracePeriodSeconds: 1, containers: [{ name: 'main', image: 'jetlet/busybox:1.35', command: ['sh', '-c', 'exit 1'] }] },
      });
      const startedEvents = async (): Promise<Array<{ count: number; firstTimestamp: string; lastTimestamp: string; metadata: { name: string } }>> => {
        const { body } = await cluster.request<{ items: Array<{ count: number; firstTimestamp: string; lastTimestamp: string; metadata: { name: string } }> }>(
          'GET',
          '/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3Dcrasher,reason%3DStarted',
        );
        return body.items;
      };
      const first = await waitFor('the first Started event', async () => (await startedEvents())[0], 120_000, 500);
      await cluster.withLogs(waitFor('16 starts of the crash-looping container', async () => ((await startedEvents())[0]?.count ?? 0) >= 16, 180_000, 1000));
      const sut = await startedEvents();
      assert.equal(sut.length, 1, 'one Event for all the starts');
      assert.equal(sut[0]?.metadata.name, first.metadata.name);
      assert.equal(sut[0]?.firstTimestamp, first.firstTimestamp);
      assert.ok(Date.parse(sut[0]?.lastTimestamp ?? '') > Date.parse(first.lastTimestamp));
      const messages = published.get('Started') ?? 0;
      assert.ok(messages <= 8, `${messages} Started messages for ${sut[0]?.count} starts`);

      // kubectl shows the series as it does Kubernetes': `describe`, `events` and `get events -o wide`.
      const described = await kubectl(['describe', 'pod', 'crasher']);
      assert.equal(described.code, 0, described.stderr);
      assert.match(described.stdout, /Normal\s+Started\s+\S+ \(x\d+ over \S+\)\s+jetlet/);
      const events = await kubectl(['events', '--for', 'pod/crasher']);
      assert.equal(events.code, 0, events.stderr);
      assert.match(events.stdout, /\S+ \(x\d+ over \S+\)\s+Normal\s+Started\s+Pod\/crasher/);
      const wide = await kubectl(['get', 'events', '-o', 'wide', '--field-selector', 'involvedObject.name=crasher,reason=Started']);
      assert.equal(wide.code, 0, wide.stderr);
      const [header, row] = wide.stdout.trim().split('\n');
      assert.match(header ?? '', /COUNT/);
      assert.match(row ?? '', new RegExp(`\\s${sut[0]?.metadata.name.replace('.', '\\.')}$`));
    } finally {
      await nc.close();
      await kubectl(['delete', 'pod', 'crasher', '--wait=true']);
    }
  });
});
