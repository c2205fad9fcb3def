import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Pod } from '#contracts';
import { Cluster, uniqueName } from '../harness/cluster.js';
import { Registry, type RegistryUser } from '../harness/registry.js';

const b64 = (s: string): string => Buffer.from(s).toString('base64');
const USER: RegistryUser = { username: 'puller', password: 'pw-' + randomBytes(8).toString('hex') };

function pod(name: string, node: string, image: string, secrets: string[], imagePullPolicy: 'IfNotPresent' | 'Always' = 'IfNotPresent'): object {
  return {
    metadata: { name },
    spec: {
      nodeName: node,
      terminationGracePeriodSeconds: 1,
      ...(secrets.length ? { imagePullSecrets: secrets.map((name) => ({ name })) } : {}),
      containers: [{ name: 'main', image, imagePullPolicy, command: ['sh', '-c', "trap 'exit 0' TERM; sleep 3600 & wait"] }],
    },
  };
}

/** Pulls from a registry that asks for a password, with the pod's imagePullSecrets (the kubelet's image_credential_provider and pull secret e2e). */
describe('the agent: imagePullSecrets', () => {
  let cluster: Cluster;
  let registry: Registry;
  let node: string;
  let image: string;

  before(async () => {
    const key = `k1:${randomBytes(32).toString('base64')}`;
    [cluster, registry] = await Promise.all([Cluster.start({ SECRET_ENCRYPTION_KEY: key }), Registry.start({ user: USER })]);
    image = await registry.push('jetlet/busybox:1.35', 'jetlet-test/private:1');
    node = uniqueName('pullsecret');
    await cluster.startAgent(node, { SECRET_ENCRYPTION_KEY: key });
    const auth = b64(`${USER.username}:${USER.password}`);
    const secrets = [
      {
        metadata: { name: 'regcred' },
        type: 'kubernetes.io/dockerconfigjson',
        data: { '.dockerconfigjson': b64(JSON.stringify({ auths: { [registry.host]: { auth } } })) },
      },
      { metadata: { name: 'legacy' }, type: 'kubernetes.io/dockercfg', data: { '.dockercfg': b64(JSON.stringify({ [`http://${registry.host}`]: { auth } })) } },
    ];
    for (const secret of secrets) {
      const { status, body } = await cluster.request('POST', '/api/v1/namespaces/default/secrets', secret);
      assert.equal(status, 201, JSON.stringify(body));
    }
  });

  after(async () => {
    if (node) await cluster?.stopAgentAndClean(node);
    await cluster?.stop();
    if (image) await cluster?.dockerCli('rmi', image);
    await registry?.stop();
  });

  const waiting = (p: Pod): { reason?: string; message?: string } | undefined => p.status.containerStatuses?.find((s) => s.name === 'main')?.state.waiting;
  const events = async (name: string): Promise<Array<{ reason: string; message: string; type: string }>> =>
    (
      await cluster.request<{ items: Array<{ reason: string; message: string; type: string }> }>(
        'GET',
        `/api/v1/namespaces/default/events?fieldSelector=involvedObject.name=${name}`,
      )
    ).body.items;

  it("shows ErrImagePull with the registry's refusal for a pod without the secret", { timeout: 120_000 }, async (t) => {
    assert.notEqual((await cluster.dockerCli('image', 'inspect', image)).code, 0, 'the image is not in the engine before a pod needs it');
    const statuses = await cluster.watchPodStatuses(node);
    t.after(() => statuses.close());
    const created = await cluster.createPod('default', pod('no-secret', node, image, []));
    const reported = (): Array<{ reason?: string; message?: string }> =>
      statuses.reports
        .filter((r) => r.uid === created.metadata.uid)
        .map((r) => r.status.containerStatuses?.find((s) => s.name === 'main')?.state.waiting ?? {});
    await cluster.waitForPod(
      'default',
      'no-secret',
      'to back off pulling',
      (p) => waiting(p)?.reason === 'ImagePullBackOff' && reported().some((w) => w.reason === 'ErrImagePull'),
      90_000,
    );
    const refused = reported().find((w) => w.reason === 'ErrImagePull');
    assert.match(refused?.message ?? '', /no basic auth credentials|unauthorized|authentication required/, `the registry's refusal: ${refused?.message}`);
    assert.ok(
      (await events('no-secret')).some((e) => e.reason === 'Failed' && e.message.startsWith(`Failed to pull image "${image}"`)),
      'a Failed event names the image',
    );
    assert.ok(registry.logLines(/ 401 /).length > 0, `the registry answered 401:\n${registry.tail()}`);
    await cluster.request('DELETE', '/api/v1/namespaces/default/pods/no-secret?gracePeriodSeconds=0');
    await cluster.waitForGone('default', 'no-secret');
  });

  it('pulls with the credentials of a dockerconfigjson secret, warning about a secret that does not exist', { timeout: 120_000 }, async () => {
    await cluster.createPod('default', pod('with-secret', node, image, ['absent', 'regcred']));
    const running = await cluster.waitForRunning('default', 'with-secret', 90_000);
    assert.equal(running.status.containerStatuses?.[0]?.image, image);
    const recorded = await events('with-secret');
    const warning = recorded.find((e) => e.reason === 'FailedToRetrieveImagePullSecret');
    assert.equal(warning?.type, 'Warning', JSON.stringify(recorded));
    assert.equal(warning?.message, 'Unable to retrieve some image pull secrets (absent); attempting to pull the image may not succeed.');
    assert.ok(
      recorded.some((e) => e.reason === 'Pulled' && /Successfully pulled image/.test(e.message)),
      JSON.stringify(recorded),
    );
  });

  it('pulls with a legacy dockercfg secret (pull policy Always goes to the registry again)', { timeout: 120_000 }, async () => {
    const before = registry.logLines(/"(GET|HEAD) \/v2\/jetlet-test\/private\/manifests\/1.*" 200 /).length;
    await cluster.createPod('default', pod('legacy-secret', node, image, ['legacy'], 'Always'));
    await cluster.waitForRunning('default', 'legacy-secret', 90_000);
    assert.ok(
      registry.logLines(/"(GET|HEAD) \/v2\/jetlet-test\/private\/manifests\/1.*" 200 /).length > before,
      `the registry served the manifest:\n${registry.tail()}`,
    );
  });

  it('keeps the password out of every log line, event and the timeline', { timeout: 60_000 }, async () => {
    const encoded = [USER.password, b64(`${USER.username}:${USER.password}`)];
    const output = [cluster.api, cluster.scheduler, ...[...cluster.agents.values()].map((a) => a.process)].flatMap((p) => p.output).join('\n');
    const timeline = await cluster.jetctl('timeline', 'default/with-secret', '--nats', cluster.nats.url);
    assert.equal(timeline.code, 0, timeline.stderr);
    assert.match(timeline.stdout, /FailedToRetrieveImagePullSecret/);
    const allEvents = JSON.stringify((await cluster.request('GET', '/api/v1/namespaces/default/events')).body);
    const metrics = await (await fetch(`${cluster.agentUrl(node)}/metrics`)).text();
    for (const value of encoded)
      for (const [where, text] of Object.entries({ output, timeline: timeline.stdout + timeline.stderr, events: allEvents, metrics }))
        assert.ok(!text.includes(value), `the password shows in ${where}`);
  });
});
