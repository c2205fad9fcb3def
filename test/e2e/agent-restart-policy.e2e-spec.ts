import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Container, ContainerStateWaiting, Pod, RestartPolicy } from '#contracts';
import { Cluster, uniqueName } from '../harness/cluster.js';
import { sleep } from '../harness/processes.js';

/** What the harness gives every agent (test/harness/cluster.ts): crash back-off 1 s doubling to 4 s, resync 2 s. */
const BACKOFF_BASE_MS = 1000;
const BACKOFF_CAP_MS = 4000;

const BUSYBOX = 'jetlet/busybox:1.35';

function podManifest(name: string, node: string, restartPolicy: RestartPolicy, containers: Container[]): object {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: { nodeName: node, restartPolicy, terminationGracePeriodSeconds: 1, containers },
  };
}

const shell = (script: string): Container => ({ name: 'main', image: BUSYBOX, command: ['sh', '-c', script] });

const mainStatus = (pod: Pod) => pod.status.containerStatuses?.find((s) => s.name === 'main');

/** One app-container attempt as Docker shows it. */
interface Attempt {
  attempt: number;
  id: string;
  startedMs?: number;
  finishedMs?: number;
}

const dockerTime = (raw: string | undefined): number | undefined => (raw && !raw.startsWith('0001-') ? Date.parse(raw) : undefined);

/**
 * Watches a pod's containers in Docker (and its status in the API) until `done` says so:
 * records every attempt's start and finish times (by the restart-count label), the most
 * app containers that existed at once, and the first CrashLoopBackOff waiting state seen.
 */
async function observeAttempts(
  cluster: Cluster,
  node: string,
  pod: Pod,
  done: (attempts: Map<number, Attempt>) => boolean,
  timeoutMs: number,
): Promise<{ attempts: Map<number, Attempt>; maxAppContainers: number; maxSandboxes: number; crashLoop?: ContainerStateWaiting }> {
  const uid = pod.metadata.uid!;
  const attempts = new Map<number, Attempt>();
  let maxAppContainers = 0;
  let maxSandboxes = 0;
  let crashLoop: ContainerStateWaiting | undefined;
  const deadline = Date.now() + timeoutMs;
  while (!done(attempts)) {
    if (Date.now() > deadline) {
      const seen = [...attempts.values()].map((a) => `#${a.attempt} started ${a.startedMs ?? '-'} finished ${a.finishedMs ?? '-'}`).join('; ');
      throw new Error(`timed out after ${timeoutMs} ms observing the attempts of ${pod.metadata.name}: ${seen}\n--- agent ${node}\n${cluster.agentLog(node)}`);
    }
    const containers = await cluster.podContainers(node, uid);
    const apps = containers.filter((c) => c.Labels['io.jetlet.kind'] === 'container');
    maxAppContainers = Math.max(maxAppContainers, apps.length);
    maxSandboxes = Math.max(maxSandboxes, containers.filter((c) => c.Labels['io.jetlet.kind'] === 'sandbox').length);
    for (const c of apps) {
      const attempt = Number(c.Labels['io.jetlet.container.restart-count']);
      const known = attempts.get(attempt);
      if (known?.finishedMs !== undefined) continue;
      const info = await cluster.docker
        .getContainer(c.Id)
        .inspect()
        .catch(() => undefined);
      if (!info) continue;
      const startedMs = dockerTime(info.State.StartedAt);
      const finishedMs = info.State.Running ? undefined : dockerTime(info.State.FinishedAt);
      attempts.set(attempt, {
        attempt,
        id: c.Id,
        ...(startedMs !== undefined ? { startedMs } : {}),
        ...(finishedMs !== undefined ? { finishedMs } : {}),
      });
    }
    const status = await cluster.getPod(pod.metadata.namespace ?? 'default', pod.metadata.name);
    const waiting = status && mainStatus(status)?.state.waiting;
    if (!crashLoop && waiting?.reason === 'CrashLoopBackOff') crashLoop = waiting;
    await sleep(150);
  }
  return { attempts, maxAppContainers, maxSandboxes, ...(crashLoop ? { crashLoop } : {}) };
}

/** Restart policy and crash back-off, after the kubelet's node e2e tests (pods.go, container_runtime.go). */
describe('the agent: restart policy and crash back-off', () => {
  let cluster: Cluster;

  before(async () => {
    cluster = await Cluster.start();
  });

  after(async () => {
    await cluster?.stop();
  });

  it(
    'restartPolicy Always restarts a container that keeps exiting 1: Running, restartCount ≥ 2, lastState terminated Error',
    { timeout: 120_000 },
    async (t) => {
      const node = uniqueName('rp-always');
      cluster.cleanUpAfter(t, node);
      await cluster.startAgent(node);
      await cluster.createPod('default', podManifest('crash-always', node, 'Always', [shell('sleep 1; exit 1')]));

      const pod = await cluster.waitForPod(
        'default',
        'crash-always',
        'to have restarted twice',
        (p) => (mainStatus(p)?.restartCount ?? 0) >= 2 && mainStatus(p)?.lastState.terminated !== undefined,
        60_000,
      );
      const status = mainStatus(pod)!;
      assert.equal(pod.status.phase, 'Running', 'a pod whose container is restarted under Always stays Running');
      assert.equal(status.lastState.terminated?.exitCode, 1);
      assert.equal(status.lastState.terminated?.reason, 'Error');
      assert.match(status.lastState.terminated?.containerID ?? '', /^docker:\/\/[0-9a-f]{64}$/);

      // Docker agrees: the attempts carry increasing restart counts, and the newest matches the API.
      const apps = (await cluster.podContainers(node, pod.metadata.uid!)).filter((c) => c.Labels['io.jetlet.kind'] === 'container');
      const newest = Math.max(...apps.map((c) => Number(c.Labels['io.jetlet.container.restart-count'])));
      assert.ok(newest >= 2, `Docker's newest attempt is #${newest}`);
    },
  );

  it(
    'restartPolicy OnFailure restarts a failing container until it exits 0, then the pod is Succeeded with reason Completed',
    { timeout: 120_000 },
    async (t) => {
      const node = uniqueName('rp-onfailure');
      cluster.cleanUpAfter(t, node);
      await cluster.startAgent(node);
      // Each restart is a new container (nothing in /tmp survives), so the script fails until a moment computed now.
      const succeedFrom = Math.floor(Date.now() / 1000) + 4;
      await cluster.createPod(
        'default',
        podManifest('fail-then-succeed', node, 'OnFailure', [shell(`if [ $(date +%s) -ge ${succeedFrom} ]; then exit 0; else exit 1; fi`)]),
      );

      const pod = await cluster.waitForPod('default', 'fail-then-succeed', 'to be Succeeded', (p) => p.status.phase === 'Succeeded', 60_000);
      const status = mainStatus(pod)!;
      assert.equal(status.state.terminated?.exitCode, 0);
      assert.equal(status.state.terminated?.reason, 'Completed');
      assert.ok(status.restartCount >= 1, `restartCount ${status.restartCount}: the container failed at least once first`);

      // A container that succeeded under OnFailure is not started again.
      await cluster.waitForPasses(node, 3);
      const apps = (await cluster.podContainers(node, pod.metadata.uid!)).filter((c) => c.Labels['io.jetlet.kind'] === 'container');
      const attempts = apps.map((c) => Number(c.Labels['io.jetlet.container.restart-count']));
      assert.equal(Math.max(...attempts), status.restartCount, `no attempt after the successful one (attempts in Docker: ${attempts.join(', ')})`);
      assert.ok(
        apps.every((c) => c.State === 'exited'),
        'no container of the pod runs',
      );
      const later = await cluster.getPod('default', 'fail-then-succeed');
      assert.equal(later?.status.phase, 'Succeeded');
      assert.equal(mainStatus(later)?.restartCount, status.restartCount);
    },
  );

  it('restartPolicy Never leaves a failed container alone: the pod is Failed, restartCount 0, reason Error', { timeout: 120_000 }, async (t) => {
    const node = uniqueName('rp-never');
    cluster.cleanUpAfter(t, node);
    await cluster.startAgent(node);
    await cluster.createPod('default', podManifest('fail-once', node, 'Never', [shell('sleep 1; exit 1')]));

    const pod = await cluster.waitForPod('default', 'fail-once', 'to be Failed', (p) => p.status.phase === 'Failed', 60_000);
    const status = mainStatus(pod)!;
    assert.equal(status.restartCount, 0);
    assert.equal(status.state.terminated?.exitCode, 1);
    assert.equal(status.state.terminated?.reason, 'Error');

    // Several resync periods later nothing new was created and nothing changed.
    await cluster.waitForPasses(node, 3);
    const apps = (await cluster.podContainers(node, pod.metadata.uid!)).filter((c) => c.Labels['io.jetlet.kind'] === 'container');
    assert.equal(apps.length, 1, 'exactly one app container was ever created');
    assert.equal(apps[0]?.Labels['io.jetlet.container.restart-count'], '0');
    assert.equal(apps[0]?.State, 'exited');
    const later = await cluster.getPod('default', 'fail-once');
    assert.equal(later?.status.phase, 'Failed');
    assert.equal(mainStatus(later)?.restartCount, 0);
  });

  it(
    'backs off a crash-looping container: CrashLoopBackOff while waiting, delays that double up to the cap, at most two containers at a time',
    { timeout: 150_000 },
    async (t) => {
      const node = uniqueName('rp-backoff');
      cluster.cleanUpAfter(t, node);
      await cluster.startAgent(node);
      const created = await cluster.createPod('default', podManifest('crash-loop', node, 'Always', [shell('sleep 1; exit 1')]));

      // Attempts 0..6: the delays before attempts 1..6 are 0, base, 2·base, then the cap (4 s) three times.
      const { attempts, maxAppContainers, maxSandboxes, crashLoop } = await observeAttempts(
        cluster,
        node,
        created,
        (seen) => seen.get(6)?.startedMs !== undefined,
        120_000,
      );
      const startOf = (n: number): number => {
        const started = attempts.get(n)?.startedMs;
        assert.ok(started !== undefined, `the start of attempt #${n} was observed`);
        return started;
      };
      const finishOf = (n: number): number => {
        const finished = attempts.get(n)?.finishedMs;
        assert.ok(finished !== undefined, `the end of attempt #${n} was observed`);
        return finished;
      };
      const gaps = [0, 1, 2, 3, 4, 5].map((n) => startOf(n + 1) - startOf(n));
      const delays = [0, 1, 2, 3, 4, 5].map((n) => startOf(n + 1) - finishOf(n));
      t.diagnostic(`start-to-start gaps (ms): ${gaps.join(', ')}; exit-to-start delays (ms): ${delays.join(', ')}`);

      assert.ok(crashLoop, 'the container showed waiting reason CrashLoopBackOff between attempts');
      assert.match(crashLoop.message ?? '', /back-off/);

      assert.ok(gaps[1] > gaps[0], `the gap between starts grows: ${gaps[1]} ms after ${gaps[0]} ms`);
      assert.ok(gaps[2] > gaps[1], `the gap between starts grows: ${gaps[2]} ms after ${gaps[1]} ms`);
      assert.ok(delays[1] > delays[0], `the back-off grows: ${delays[1]} ms after ${delays[0]} ms`);
      assert.ok(delays[2] > delays[1], `the back-off grows: ${delays[2]} ms after ${delays[1]} ms`);
      const tolerance = 2500;
      for (const n of [3, 4, 5]) {
        assert.ok(delays[n] >= BACKOFF_CAP_MS - 500, `the back-off before attempt #${n + 1} reached the cap: ${delays[n]} ms`);
        assert.ok(delays[n] <= BACKOFF_CAP_MS + tolerance, `the back-off before attempt #${n + 1} stays at the cap: ${delays[n]} ms`);
      }

      assert.ok(maxAppContainers <= 2, `at most two containers of "main" existed at once (saw ${maxAppContainers})`);
      assert.equal(maxSandboxes, 1, 'the sandbox is never duplicated');
      const apps = (await cluster.podContainers(node, created.metadata.uid!)).filter((c) => c.Labels['io.jetlet.kind'] === 'container');
      assert.ok(apps.length <= 2, `after 6 restarts ${apps.length} containers of "main" remain`);

      const pod = await cluster.getPod('default', 'crash-loop');
      assert.equal(pod?.status.phase, 'Running');
      assert.ok((mainStatus(pod)?.restartCount ?? 0) >= 6);
    },
  );

  it('resets the crash back-off after a container ran longer than twice the cap', { timeout: 150_000 }, async (t) => {
    const node = uniqueName('rp-reset');
    cluster.cleanUpAfter(t, node);
    // A larger cap for this agent, so that "restarted at once" and "restarted after the cap" stay far apart under load.
    const capMs = 6000;
    await cluster.startAgent(node, { BACKOFF_CAP_SECONDS: String(capMs / 1000) });
    // Crash at once until `runFrom` (by then the back-off is at the cap), then run 14 s (> 2 × cap) and fail.
    const runFrom = Math.floor(Date.now() / 1000) + 15;
    const created = await cluster.createPod(
      'default',
      podManifest('crash-then-run', node, 'Always', [shell(`if [ $(date +%s) -lt ${runFrom} ]; then exit 1; fi; sleep 14; exit 1`)]),
    );
    const longRun = (seen: Map<number, Attempt>): Attempt | undefined =>
      [...seen.values()].find((a) => a.startedMs !== undefined && a.finishedMs !== undefined && a.finishedMs - a.startedMs > 2 * capMs);
    const { attempts } = await observeAttempts(
      cluster,
      node,
      created,
      (seen) => {
        const long = longRun(seen);
        return long !== undefined && seen.get(long.attempt + 1)?.startedMs !== undefined;
      },
      120_000,
    );
    const long = longRun(attempts)!;
    const before = attempts.get(long.attempt - 1);
    const next = attempts.get(long.attempt + 1)!;
    const delayBefore = long.startedMs! - (before?.finishedMs ?? NaN);
    const delayAfter = next.startedMs! - long.finishedMs!;
    t.diagnostic(
      `attempt #${long.attempt} started ${delayBefore} ms after #${long.attempt - 1} ended and ran ${long.finishedMs! - long.startedMs!} ms; ` +
        `#${next.attempt} started ${delayAfter} ms after it ended`,
    );
    assert.ok(delayBefore >= capMs - 500, `the back-off had reached the cap before the long run: ${delayBefore} ms`);
    assert.ok(
      delayAfter < capMs - 1000,
      `after ${long.finishedMs! - long.startedMs!} ms of running the back-off starts again from the base (${BACKOFF_BASE_MS} ms), not the cap (${capMs} ms): restarted after ${delayAfter} ms`,
    );
  });
});
