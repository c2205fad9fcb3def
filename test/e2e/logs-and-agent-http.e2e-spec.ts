import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { connect, createInbox } from '@nats-io/transport-node';
import { SUBJECTS, type Container, type Pod } from '#contracts';
import { Cluster, uniqueName } from '../harness/cluster.js';
import { DockerProxy } from '../harness/docker-proxy.js';
import { sleep, waitFor } from '../harness/processes.js';
import { parsePrometheusText, type Exposition } from '../harness/prometheus.js';

const BUSYBOX = 'jetlet/busybox:1.35';

interface Status {
  kind: string;
  status: string;
  reason: string;
  message: string;
  code: number;
}

const shell = (name: string, script: string): Container => ({ name, image: BUSYBOX, command: ['sh', '-c', script] });

function pod(name: string, node: string | undefined, containers: Container[], extra: Record<string, unknown> = {}): object {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: { ...(node ? { nodeName: node } : {}), terminationGracePeriodSeconds: 1, containers, ...extra },
  };
}

/** Reads a response body until `done` holds for the text so far; returns the text and how many reads it took. */
async function readUntil(body: ReadableStream<Uint8Array>, done: (text: string) => boolean, timeoutMs: number): Promise<{ text: string; reads: number }> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const deadline = Date.now() + timeoutMs;
  let text = '';
  let reads = 0;
  try {
    while (!done(text)) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out after ${timeoutMs} ms reading a log; got ${JSON.stringify(text)}`);
      const next = await Promise.race([reader.read(), sleep(left).then(() => undefined)]);
      if (next === undefined) continue;
      if (next.done) break;
      reads++;
      text += decoder.decode(next.value, { stream: true });
    }
    return { text, reads };
  } finally {
    reader.releaseLock();
  }
}

const ticks = (text: string): number[] => [...text.matchAll(/tick-(\d+)/g)].map((m) => Number(m[1]));

/** Container logs through the API (over NATS to the node's agent) and through the agent's own HTTP server, its metrics and health. */
describe('logs and the agent HTTP server', () => {
  let cluster: Cluster;
  const node = uniqueName('logs-node');
  const token = randomBytes(16).toString('hex');
  const bearer = { authorization: `Bearer ${token}` };

  const logPath = (name: string, query = ''): string => `/api/v1/namespaces/default/pods/${name}/log${query}`;

  async function apiLog(name: string, query = ''): Promise<{ status: number; type: string | null; text: string }> {
    const response = await fetch(`${cluster.apiUrl}${logPath(name, query)}`);
    return { status: response.status, type: response.headers.get('content-type'), text: await response.text() };
  }

  async function apiError(name: string, query = ''): Promise<{ status: number; body: Status }> {
    const response = await fetch(`${cluster.apiUrl}${logPath(name, query)}`);
    return { status: response.status, body: (await response.json()) as Status };
  }

  function agentGet(path: string, headers: Record<string, string> = bearer, agentNode = node): Promise<Response> {
    return fetch(`${cluster.agentUrl(agentNode)}${path}`, { headers });
  }

  async function metrics(): Promise<Exposition> {
    const response = await agentGet('/metrics');
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    return parsePrometheusText(await response.text());
  }

  before(async () => {
    cluster = await Cluster.start();
    await cluster.startAgent(node, { AGENT_TOKEN: token });
  });

  after(async () => {
    await cluster?.stop();
  });

  it('serves exactly "Hello World\\n" through the API, jetctl logs and the agent', async () => {
    await cluster.createPod('default', pod('hello', node, [shell('main', 'echo Hello World; exec sleep 3600')]));
    await cluster.waitForRunning('default', 'hello');
    const sut = await cluster.withLogs(
      waitFor('the log to have a line', async () => ((await apiLog('hello')).text !== '' ? apiLog('hello') : undefined), 10_000),
    );
    assert.equal(sut.status, 200);
    assert.match(sut.type ?? '', /^text\/plain/);
    assert.equal(sut.text, 'Hello World\n');

    const cli = await cluster.jetctl('logs', 'hello');
    assert.equal(cli.code, 0, cli.stderr);
    assert.equal(cli.stdout, 'Hello World\n');

    const local = await agentGet('/containerLogs/default/hello/main');
    assert.equal(local.status, 200);
    assert.equal(await local.text(), 'Hello World\n');
  });

  it('answers requests it cannot serve with 400 Status objects, as Kubernetes', async () => {
    await cluster.createPod('default', pod('two', node, [shell('a', 'exec sleep 3600'), shell('b', 'exec sleep 3600')]));
    await cluster.createPod('default', pod('unbound', undefined, [shell('main', 'exec sleep 3600')], { nodeSelector: { 'jetlet.test/nowhere': 'true' } }));
    await cluster.createPod('default', pod('never', node, [{ name: 'main', image: 'jetlet/not-here:1', imagePullPolicy: 'Never' }]));
    await cluster.waitForRunning('default', 'two');
    await cluster.waitForPod(
      'default',
      'never',
      'to wait with ErrImageNeverPull',
      (p) => p.status.containerStatuses?.[0]?.state.waiting?.reason === 'ErrImageNeverPull',
    );

    const cases: Array<[string, string, string]> = [
      ['two', '', 'a container name must be specified for pod two, choose one of: [a b]'],
      ['two', '?container=c', 'container c is not valid for pod two'],
      ['two', '?container=a&previous=true', 'previous terminated container "a" in pod "two" not found'],
      ['unbound', '', 'container "main" in pod "unbound" is waiting to start: ContainerCreating'],
      ['never', '', 'container "main" in pod "never" is waiting to start: ErrImageNeverPull'],
      ['hello', '?tailLines=ten', 'tailLines: strconv.ParseInt: parsing "ten": invalid syntax'],
    ];
    for (const [name, query, message] of cases) {
      const { status, body } = await apiError(name, query);
      assert.deepEqual(
        { status, kind: body.kind, status_: body.status, reason: body.reason, message: body.message, code: body.code },
        {
          status: 400,
          kind: 'Status',
          status_: 'Failure',
          reason: 'BadRequest',
          message,
          code: 400,
        },
      );
    }

    const invalid = await apiError('hello', '?tailLines=-1');
    assert.equal(invalid.status, 422);
    assert.equal(invalid.body.message, 'PodLogOptions "hello" is invalid: tailLines: Invalid value: -1: must be greater than or equal to 0');
    const missing = await apiError('nobody');
    assert.equal(missing.status, 404);
    assert.equal(missing.body.reason, 'NotFound');

    const cli = await cluster.jetctl('logs', 'two');
    assert.equal(cli.code, 1);
    assert.equal(cli.stderr.trim(), 'Error from server (BadRequest): a container name must be specified for pod two, choose one of: [a b]');
    const chosen = await apiLog('two', '?container=b');
    assert.deepEqual([chosen.status, chosen.text], [200, '']);

    const local = await agentGet('/containerLogs/default/two/c');
    assert.equal(local.status, 400);
    assert.equal(await local.text(), 'container c is not valid for pod two\n');
  });

  it('answers a request with a body, whatever its charset, as one it has no route for, and serves on', async () => {
    // Every route of the agent is a GET: it parses no body, and its bundle has no charset decoders.
    for (const type of [
      'application/json',
      'application/json; charset=windows-1252',
      'application/x-www-form-urlencoded; charset=koi8-r',
      'text/plain; charset=utf-16le',
    ]) {
      const response = await fetch(`${cluster.agentUrl(node)}/pods`, { method: 'POST', headers: { ...bearer, 'content-type': type }, body: '{"a":"\u00e9"}' });
      assert.equal(response.status, 404, type);
      await response.arrayBuffer();
    }
    const health = await agentGet('/healthz');
    assert.equal(health.status, 200);
    assert.equal(await health.text(), 'ok');
  });

  it('answers a pod whose node has no agent with 503, and an invalid request on NATS with an error, without crashing', async () => {
    await cluster.createPod('default', pod('stranded', uniqueName('ghost-node'), [shell('main', 'exec sleep 3600')]));
    const stranded = await apiError('stranded');
    assert.equal(stranded.status, 503);
    assert.equal(stranded.body.reason, 'ServiceUnavailable');
    assert.match(stranded.body.message, /^the agent of node "ghost-node-\w+" is not connected/);

    const nc = await connect({ servers: cluster.nats.url });
    try {
      const ask = async (payload: string): Promise<{ streamId: string; kind: string; error?: { code: number; message: string } }> => {
        const inbox = createInbox();
        const answer = nc.subscribe(inbox, { max: 1, timeout: 5_000 });
        nc.publish(SUBJECTS.logRequests(node), payload, { reply: inbox });
        for await (const msg of answer) return msg.json();
        throw new Error('no answer');
      };
      const streamId = randomUUID();
      const garbage = await ask('{"not json');
      assert.deepEqual([garbage.kind, garbage.error?.code], ['error', 400]);
      const invalid = await ask(JSON.stringify({ version: 1, streamId, namespace: 'default', name: 'hello', tailLines: -5, shell: 'rm -rf /' }));
      assert.equal(invalid.streamId, streamId);
      assert.equal(invalid.kind, 'error');
      assert.match(invalid.error?.message ?? '', /^invalid LogRequest: .*tailLines: Invalid value: -5: must be greater than or equal to 0/);
      assert.match(invalid.error?.message ?? '', /shell: field is not supported/);
    } finally {
      await nc.close();
    }
    assert.ok(cluster.agents.get(node)?.process.running, 'the agent is still up');
    assert.equal((await apiLog('hello')).text, 'Hello World\n');
  });

  it("shows the previous run's output with previous=true after a restart", async () => {
    // The host's uptime (not namespaced) tells which run started first.
    const created = await cluster.createPod('default', pod('restarts', node, [shell('main', "echo run-$(cut -d' ' -f1 /proc/uptime); sleep 4; exit 1")]));
    // The engine's own view of the pod's runs, so a restart between reads is seen at once.
    const runs = async (): Promise<string> =>
      (await cluster.podContainers(node, created.metadata.uid ?? ''))
        .filter((c) => c.Labels['io.jetlet.kind'] === 'container')
        .map((c) => `${c.Id}:${c.State}`)
        .sort()
        .join(',');
    await cluster.waitForPod(
      'default',
      'restarts',
      'to run again after a restart',
      (p) => (p.status.containerStatuses?.[0]?.restartCount ?? 0) >= 1 && p.status.containerStatuses?.[0]?.state.running !== undefined,
    );
    // A restart between two reads would compare different runs: keep only reads during which
    // the engine's containers of the pod (ids and states) did not change.
    const stable = await cluster.withLogs(
      waitFor(
        'a current and a previous log read while no restart happened',
        async () => {
          const before = await runs();
          const current = await apiLog('restarts');
          const previous = await apiLog('restarts', '?previous=true');
          const cli = await cluster.jetctl('logs', 'restarts', '--previous');
          const again = await apiLog('restarts');
          const after = await runs();
          return before === after && current.text !== '' && current.text === again.text ? { current: current.text, previous, cli } : undefined;
        },
        20_000,
        300,
      ),
    );
    assert.equal(stable.previous.status, 200);
    assert.match(stable.current, /^run-\d+\.\d+\n$/);
    assert.match(stable.previous.text, /^run-\d+\.\d+\n$/);
    const uptime = (text: string): number => Number(text.slice(4, -1));
    assert.ok(uptime(stable.current) - uptime(stable.previous.text) >= 4, `previous ${stable.previous.text} ran a whole run before current ${stable.current}`);
    assert.equal(stable.cli.code, 0, stable.cli.stderr);
    assert.equal(stable.cli.stdout, stable.previous.text);
    // A crash loop would make the running-container count of later tests move on its own.
    assert.equal((await cluster.request('DELETE', '/api/v1/namespaces/default/pods/restarts')).status, 200);
    await cluster.waitForGone('default', 'restarts');
  });

  it('follows a growing log in chunks, and the agent stops cleanly when the client goes away', async () => {
    await cluster.createPod('default', pod('ticker', node, [shell('main', 'i=0; while true; do echo tick-$i; i=$((i+1)); sleep 0.5; done')]));
    await cluster.waitForRunning('default', 'ticker');
    const agent = cluster.agents.get(node)!.process;
    const api = cluster.api;

    const controller = new AbortController();
    const response = await fetch(`${cluster.apiUrl}${logPath('ticker', '?follow=true')}`, { signal: controller.signal });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('transfer-encoding'), 'chunked');
    const first = await readUntil(response.body!, (text) => ticks(text).length >= 1, 5_000);
    const seenFirst = Math.max(...ticks(first.text));
    const later = await readUntil(response.body!, (text) => ticks(text).some((n) => n >= seenFirst + 3), 5_000);
    const all = ticks(first.text + later.text);
    assert.deepEqual(
      all,
      all.map((_, i) => all[0] + i),
      'ticks arrive in order, none lost or repeated',
    );
    assert.ok(later.reads >= 2, `new lines came as they were written (${later.reads} reads)`);

    const [agentMark, apiMark] = [agent.output.length, api.output.length];
    controller.abort();
    await cluster.withLogs(
      waitFor('the agent to end the log stream', async () => (await metrics()).value('jetlet_log_streams', { via: 'nats' }) === 0, 3_000, 100),
    );

    // The agent's own endpoint follows too, and lets go the same way.
    const local = new AbortController();
    const direct = await fetch(`${cluster.agentUrl(node)}/containerLogs/default/ticker/main?follow=true&tailLines=1`, {
      headers: bearer,
      signal: local.signal,
    });
    assert.equal(direct.status, 200);
    const read = await readUntil(direct.body!, (text) => ticks(text).length >= 2, 5_000);
    assert.equal(ticks(read.text)[1], ticks(read.text)[0] + 1);
    local.abort();
    await waitFor('the agent to end its HTTP log stream', async () => (await metrics()).value('jetlet_log_streams', { via: 'http' }) === 0, 3_000, 100);
    // Checked last, so the API had the whole HTTP round above to log anything about the closed stream.
    const problems = [...agent.output.slice(agentMark), ...api.output.slice(apiMark)].filter((line) => /\b(ERROR|WARN)\b/.test(line));
    assert.deepEqual(problems, []);
  });

  it('ends open follows when the API shuts down, and the agent stops reading them', async () => {
    const response = await fetch(`${cluster.apiUrl}${logPath('ticker', '?follow=true&tailLines=1')}`);
    await readUntil(response.body!, (text) => ticks(text).length >= 1, 5_000);
    assert.equal((await metrics()).value('jetlet_log_streams', { via: 'nats' }), 1);
    const started = Date.now();
    await cluster.api.stop();
    const stopMs = Date.now() - started;
    assert.ok(stopMs < 5_000, `the API stopped in ${stopMs} ms (a follow held it open?)`);
    await waitFor('the agent to end the log stream', async () => (await metrics()).value('jetlet_log_streams', { via: 'nats' }) === 0, 3_000, 100);
    await cluster.restartApi();
  });

  it('ends a followed log (stdout and stderr) when the container stops, through the API and jetctl logs -f', async () => {
    await cluster.createPod('default', pod('brief', node, [shell('main', 'echo first; sleep 2; echo last >&2')], { restartPolicy: 'Never' }));
    await cluster.waitForRunning('default', 'brief');
    const started = Date.now();
    const [sut, cli] = await Promise.all([apiLog('brief', '?follow=true'), cluster.jetctl('logs', 'brief', '-f')]);
    assert.equal(sut.text, 'first\nlast\n');
    assert.equal(cli.stdout, 'first\nlast\n', cli.stderr);
    assert.equal(cli.code, 0);
    assert.ok(Date.now() - started < 10_000, 'the responses ended with the container');
  });

  it('applies tailLines, timestamps and sinceSeconds', async () => {
    await cluster.withLogs(waitFor('ticker to have printed five lines', async () => ticks((await apiLog('ticker')).text).length >= 5, 10_000));

    const tail = ticks((await apiLog('ticker', '?tailLines=2')).text);
    assert.equal(tail.length, 2);
    assert.equal(tail[1], tail[0] + 1);
    assert.equal((await apiLog('ticker', '?tailLines=0')).text, '');

    const stamped = (await apiLog('ticker', '?tailLines=1&timestamps=true')).text;
    assert.match(stamped, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z tick-\d+\n$/);
    const stampMs = Date.parse(stamped.slice(0, 23) + 'Z');
    assert.ok(Math.abs(Date.now() - stampMs) < 5_000, `the timestamp ${stamped.slice(0, 30)} is the line's time`);

    const total = ticks((await apiLog('ticker')).text).length;
    const recent = ticks((await apiLog('ticker', '?sinceSeconds=2')).text).length;
    assert.ok(recent >= 2 && recent <= 6 && recent < total, `2 s of a line every 0.5 s: ${recent} of ${total} lines`);

    const cli = await cluster.jetctl('logs', 'ticker', '--tail', '1', '--timestamps');
    assert.equal(cli.code, 0, cli.stderr);
    assert.match(cli.stdout, /^\S+Z tick-\d+\n$/);
  });

  it('exposes Prometheus metrics, and kubelet_running_pods and kubelet_pod_start_duration_seconds move when a pod starts', async () => {
    const before = await metrics();
    assert.equal(before.types.get('kubelet_pod_start_duration_seconds'), 'histogram');
    assert.equal(before.types.get('kubelet_pleg_relist_duration_seconds'), 'histogram');
    assert.equal(before.types.get('kubelet_pleg_relist_interval_seconds'), 'histogram');
    assert.equal(before.types.get('kubelet_pleg_last_seen_seconds'), 'gauge');
    assert.ok((before.value('kubelet_pleg_relist_duration_seconds_count') ?? 0) > 0);
    assert.ok((before.value('kubelet_pleg_relist_interval_seconds_count') ?? 0) > 0);
    assert.ok(Math.abs(Date.now() / 1000 - (before.value('kubelet_pleg_last_seen_seconds') ?? 0)) < 10, 'the PLEG relisted within a resync');
    const runningBefore = before.value('kubelet_running_pods') ?? NaN;
    const startsBefore = before.value('kubelet_pod_start_duration_seconds_count') ?? NaN;

    await cluster.createPod('default', pod('measured', node, [shell('main', 'exec sleep 3600'), shell('side', 'exec sleep 3600')]));
    await cluster.waitForRunning('default', 'measured');
    const sut = await cluster.withLogs(
      waitFor(
        'the pod to be counted',
        async () => {
          const now = await metrics();
          return now.value('kubelet_running_pods') === runningBefore + 1 ? now : undefined;
        },
        10_000,
      ),
    );
    assert.equal(sut.value('kubelet_pod_start_duration_seconds_count'), startsBefore + 1, 'one more pod start recorded');
    const seconds = (sut.value('kubelet_pod_start_duration_seconds_sum') ?? 0) - (before.value('kubelet_pod_start_duration_seconds_sum') ?? 0);
    assert.ok(seconds > 0 && seconds < 30, `pod start took ${seconds}s`);
    assert.equal(sut.value('kubelet_running_containers'), (before.value('kubelet_running_containers') ?? NaN) + 2, 'two more running containers');
  });

  it('lists what it runs on /pods and the running containers on /runningpods', async () => {
    const measured = (await cluster.getPod('default', 'measured'))!;
    const pods = (await (await agentGet('/pods')).json()) as { kind: string; items: Pod[] };
    assert.equal(pods.kind, 'PodList');
    const listed = pods.items.find((p) => p.metadata.name === 'measured');
    assert.equal(listed?.metadata.uid, measured.metadata.uid);
    assert.equal(listed?.status.phase, 'Running');
    assert.deepEqual(
      listed?.spec.containers.map((c) => c.name),
      ['main', 'side'],
    );
    assert.equal(pods.items.find((p) => p.metadata.name === 'never')?.status.containerStatuses?.[0]?.state.waiting?.reason, 'ErrImageNeverPull');

    const running = (await (await agentGet('/runningpods')).json()) as { kind: string; items: unknown[] };
    assert.equal(running.kind, 'PodList');
    const sut = running.items.find((p) => (p as { metadata: { name: string } }).metadata.name === 'measured');
    assert.deepEqual(sut, {
      metadata: { name: 'measured', namespace: 'default', uid: measured.metadata.uid },
      spec: {
        containers: [
          { name: 'main', image: BUSYBOX },
          { name: 'side', image: BUSYBOX },
        ],
      },
      status: {},
    });
    const names = running.items.map((p) => (p as { metadata: { name: string } }).metadata.name);
    assert.ok(!names.includes('never') && !names.includes('brief'), `only pods with running containers: ${names.join(', ')}`);
  });

  it('asks for the bearer token on everything but /healthz', async () => {
    for (const path of ['/metrics', '/pods', '/runningpods', '/containerLogs/default/hello/main']) {
      assert.equal((await agentGet(path, {})).status, 401, `${path} without a token`);
      assert.equal((await agentGet(path, { authorization: `Bearer ${token}x` })).status, 401, `${path} with a wrong token`);
      assert.equal((await agentGet(path, { authorization: token })).status, 401, `${path} with the token but no Bearer scheme`);
      assert.equal((await agentGet(path)).status, 200, `${path} with the token`);
    }
    const health = await agentGet('/healthz', {});
    assert.equal(health.status, 200);
    assert.equal(await health.text(), 'ok');
  });

  it('goes unhealthy on /healthz, saying why, while its Docker connection is broken, and recovers', async (t) => {
    const proxy = await DockerProxy.start();
    t.after(() => proxy.stop());
    const other = uniqueName('healthz-node');
    cluster.cleanUpAfter(t, other);
    await cluster.startAgent(other, { DOCKER_HOST: proxy.dockerHost });
    const healthz = async (): Promise<{ status: number; text: string }> => {
      const response = await agentGet('/healthz?verbose', {}, other);
      return { status: response.status, text: await response.text() };
    };
    const healthy = await waitFor('the agent to be healthy', async () => {
      const h = await healthz();
      return h.status === 200 && /event stream connected/.test(h.text) ? h : undefined;
    });
    assert.match(healthy.text, /^\[\+\]pleg ok: last relist [\d.]+s ago, event stream connected for/m);
    assert.match(healthy.text, /^healthz check passed$/m);

    await proxy.break();
    const sut = await cluster.withLogs(
      waitFor(
        'the agent to report the broken engine connection',
        async () => {
          // The sync loop may be reported stalled first on a busy machine; wait for the PLEG's verdict.
          const h = await healthz();
          return h.status === 500 && /^\[-\]pleg failed/m.test(h.text) ? h : undefined;
        },
        20_000,
        250,
      ),
    );
    assert.match(sut.text, /^\[-\]pleg failed: runtime event stream disconnected for \d+s: .+; last relist failed: .+$/m);
    assert.match(sut.text, /^healthz check failed$/m);

    await proxy.restore();
    await cluster.withLogs(waitFor('the agent to be healthy again', async () => (await healthz()).status === 200, 40_000, 250));
  });
});
