import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { ContainerStateWaiting, Pod, PullPolicy } from '#contracts';
import { Cluster, uniqueName } from '../harness/cluster.js';
import { Registry } from '../harness/registry.js';

interface Status {
  kind: string;
  reason: string;
  code: number;
  details?: { causes?: Array<{ field: string; reason: string; message: string }> };
}

function imagePod(name: string, node: string, image: string, imagePullPolicy?: PullPolicy): object {
  return {
    metadata: { name },
    spec: {
      nodeName: node,
      terminationGracePeriodSeconds: 1,
      containers: [{ name: 'main', image, command: ['sh', '-c', "trap 'exit 0' TERM; sleep 3600 & wait"], ...(imagePullPolicy ? { imagePullPolicy } : {}) }],
    },
  };
}

const waitingOf = (pod: Pod): ContainerStateWaiting | undefined => pod.status.containerStatuses?.find((s) => s.name === 'main')?.state.waiting;

/** Image pulls and their failures, after the kubelet's node e2e image tests (image_pull.go, runtime_conformance.go). */
describe('the agent: images', () => {
  let cluster: Cluster;
  let registry: Registry;
  let pushed: string;
  let neverPulled: string;
  let progressed: string;
  const dir = mkdtempSync(join(tmpdir(), 'jetlet-images-'));

  before(async () => {
    [cluster, registry] = await Promise.all([Cluster.start(), Registry.start()]);
    pushed = await registry.push('jetlet/busybox:1.35', 'jetlet-test/busybox:latest');
    neverPulled = await registry.push('jetlet/busybox:1.35', 'jetlet-test/busybox:never-pull');
    progressed = await registry.pushFresh('jetlet-test/fresh:progress', 8 * 1024 * 1024);
  });

  after(async () => {
    await cluster?.stop();
    // Untag whatever the tests pulled (never the local jetlet/busybox:1.35 they came from).
    for (const reference of [pushed, neverPulled, progressed]) if (reference) await cluster?.dockerCli('rmi', reference);
    await registry?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('pulls a :latest image (pull policy defaulted to Always) from a registry and runs it', { timeout: 120_000 }, async (t) => {
    const node = uniqueName('img-pull');
    cluster.cleanUpAfter(t, node);
    await cluster.startAgent(node);
    assert.notEqual((await cluster.dockerCli('image', 'inspect', pushed)).code, 0, 'the image is not present before the pod needs it');
    const manifestRequests = (): number => registry.logLines(/"(GET|HEAD) \/v2\/jetlet-test\/busybox\/manifests\//).length;
    const requestsBefore = manifestRequests();

    const created = await cluster.createPod('default', imagePod('from-registry', node, pushed));
    assert.equal(created.spec.containers[0]?.imagePullPolicy, 'Always', 'an image tagged :latest defaults to Always');
    const pod = await cluster.waitForRunning('default', 'from-registry', 90_000);
    const status = pod.status.containerStatuses![0];
    assert.equal(status.image, pushed);
    assert.match(status.imageID, /^(docker-pullable:\/\/|sha256:|docker:\/\/)/);
    assert.ok(manifestRequests() > requestsBefore, `the registry served the manifest:\n${registry.tail()}`);
    assert.equal((await cluster.dockerCli('image', 'inspect', pushed)).code, 0, 'the image was pulled into the engine');
  });

  it('shows the pull progress to jetctl apply --wait, and keeps it in the log for the timeline', { timeout: 120_000 }, async (t) => {
    const node = uniqueName('img-progress');
    cluster.cleanUpAfter(t, node);
    await cluster.startAgent(node);
    const file = join(dir, 'progress.json');
    writeFileSync(file, JSON.stringify({ apiVersion: 'v1', kind: 'Pod', ...imagePod('pull-progress', node, progressed) }));
    const { code, stdout, stderr } = await cluster.jetctl('apply', '-f', file, '--wait', '--timeout', '90s', '--nats', cluster.nats.url);
    assert.equal(code, 0, `${stdout}\n${stderr}`);
    const lines = stdout.split('\n');
    const at = (pattern: RegExp): number => lines.findIndex((l) => pattern.test(l));
    // The engine names the layers, downloads them, and the last figure is the whole image.
    const bar = /^pod\/pull-progress: Pulling main: \S+:progress \[[#.]{20}\] (\d+)% [\d.]+\/[\d.]+ MiB, (\d+)\/(\d+) layers$/;
    const bars = lines.filter((l) => bar.test(l));
    assert.ok(bars.length > 0, stdout);
    const last = bar.exec(bars.at(-1) ?? '');
    assert.equal(last?.[1], '100', stdout);
    assert.equal(last?.[2], last?.[3], `every layer done at the end:\n${stdout}`);
    assert.ok(at(/Pulling: Pulling image/) < at(bar) && at(bar) < at(/Pulled: Successfully pulled image/), stdout);

    const timeline = await cluster.jetctl('timeline', 'default/pull-progress', '--nats', cluster.nats.url);
    assert.match(timeline.stdout, /ImagePullProgress\s+pulling for main: \S+:progress \[#{20}\] 100%/, timeline.stdout + timeline.stderr);
  });

  it('shows ErrImagePull and then ImagePullBackOff for an image that cannot be pulled', { timeout: 120_000 }, async (t) => {
    const node = uniqueName('img-backoff');
    cluster.cleanUpAfter(t, node);
    await cluster.startAgent(node);
    const image = '127.0.0.1:1/nothing/here:1';
    const statuses = await cluster.watchPodStatuses(node);
    t.after(() => statuses.close());
    const created = await cluster.createPod('default', imagePod('unpullable', node, image));

    // Every waiting reason the agent reported, in order (repeats collapsed): the bus has each
    // report, even one the API replaced before a poll could see it.
    const reported = (): string[] =>
      statuses.reports
        .filter((r) => r.uid === created.metadata.uid)
        .map((r) => r.status.containerStatuses?.find((s) => s.name === 'main')?.state.waiting?.reason ?? '(not waiting)')
        .filter((reason, i, all) => i === 0 || all[i - 1] !== reason);
    const backoff = await cluster
      .waitForPod(
        'default',
        'unpullable',
        'to show ImagePullBackOff after ErrImagePull',
        (p) => waitingOf(p)?.reason === 'ImagePullBackOff' && reported().includes('ErrImagePull'),
        90_000,
      )
      .catch((error: Error) => {
        throw new Error(`${error.message}\nwaiting reasons reported, in order: ${reported().join(' → ')}`, { cause: error });
      });
    const sequence = reported();
    t.diagnostic(`waiting reasons reported: ${sequence.join(' → ')}`);
    const firstFailure = sequence.find((reason) => reason !== 'ContainerCreating');
    assert.equal(firstFailure, 'ErrImagePull', `the first failed pull is reported as ErrImagePull, then ImagePullBackOff: ${sequence.join(' → ')}`);
    assert.ok(sequence.slice(sequence.indexOf('ErrImagePull')).includes('ImagePullBackOff'), `ImagePullBackOff follows ErrImagePull: ${sequence.join(' → ')}`);
    assert.equal(backoff.status.phase, 'Pending');
    assert.match(waitingOf(backoff)?.message ?? '', /back-off/i);
    assert.ok(waitingOf(backoff)?.message?.includes(image), `the message names the image: ${waitingOf(backoff)?.message}`);
    const apps = (await cluster.podContainers(node, created.metadata.uid!)).filter((c) => c.Labels['io.jetlet.kind'] === 'container');
    assert.deepEqual(apps, [], 'no app container was created without its image');
  });

  it('shows ErrImageNeverPull for an absent image with imagePullPolicy Never, and never pulls it', { timeout: 120_000 }, async (t) => {
    const node = uniqueName('img-never');
    cluster.cleanUpAfter(t, node);
    await cluster.startAgent(node);
    // In the registry but not in the engine: a pull would succeed, so only the policy keeps it out.
    const image = neverPulled;
    const manifestRequests = (): number => registry.logLines(/\/v2\/jetlet-test\/busybox\/manifests\/never-pull/).length;
    const requestsBefore = manifestRequests();
    assert.notEqual((await cluster.dockerCli('image', 'inspect', image)).code, 0, 'the image is absent from the engine');
    const created = await cluster.createPod('default', imagePod('never-pull', node, image, 'Never'));

    const pod = await cluster.waitForPod(
      'default',
      'never-pull',
      'to wait with ErrImageNeverPull',
      (p) => waitingOf(p)?.reason === 'ErrImageNeverPull',
      60_000,
    );
    assert.equal(pod.status.phase, 'Pending');
    assert.ok(waitingOf(pod)?.message?.includes(image), `the message names the image: ${waitingOf(pod)?.message}`);
    await cluster.waitForPasses(node, 3);
    const later = await cluster.getPod('default', 'never-pull');
    assert.equal(later && waitingOf(later)?.reason, 'ErrImageNeverPull', 'it stays ErrImageNeverPull');
    assert.equal(manifestRequests(), requestsBefore, 'the registry was never asked for it');
    assert.notEqual((await cluster.dockerCli('image', 'inspect', image)).code, 0, 'the image is still absent');
    const apps = (await cluster.podContainers(node, created.metadata.uid!)).filter((c) => c.Labels['io.jetlet.kind'] === 'container');
    assert.deepEqual(apps, [], 'no app container was created');
  });

  it('rejects an invalid image name with 422, or shows InvalidImageName if it was accepted', { timeout: 120_000 }, async (t) => {
    const node = uniqueName('img-invalid');
    cluster.cleanUpAfter(t, node);
    await cluster.startAgent(node);
    const image = 'Not A Valid:Image';
    const answer = await cluster.request<Pod | Status>('POST', '/api/v1/namespaces/default/pods', imagePod('bad-image', node, image, 'IfNotPresent'));
    if (answer.status === 422) {
      const status = answer.body as Status;
      t.diagnostic('the API rejected the image name with 422');
      assert.equal(status.kind, 'Status');
      assert.equal(status.reason, 'Invalid');
      assert.ok(
        status.details?.causes?.some((c) => c.field === 'spec.containers[0].image'),
        `a cause names spec.containers[0].image: ${JSON.stringify(status.details?.causes)}`,
      );
      assert.equal(await cluster.getPod('default', 'bad-image'), undefined, 'nothing was written');
      return;
    }
    assert.equal(answer.status, 201, `the API answered ${answer.status}: ${JSON.stringify(answer.body)}`);
    t.diagnostic('the API accepted the image name; the agent must report InvalidImageName');
    const pod = await cluster.waitForPod(
      'default',
      'bad-image',
      'to wait with InvalidImageName',
      (p) => waitingOf(p)?.reason === 'InvalidImageName' || waitingOf(p)?.reason === 'ErrImagePull',
      60_000,
    );
    assert.equal(waitingOf(pod)?.reason, 'InvalidImageName', `waiting: ${JSON.stringify(waitingOf(pod))}`);
    assert.equal(pod.status.phase, 'Pending');
  });
});
