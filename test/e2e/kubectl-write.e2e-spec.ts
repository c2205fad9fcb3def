import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Pod } from '#contracts';
import { Cluster, uniqueName } from '../harness/cluster.js';
import { Kubectl } from '../harness/kubectl.js';
import { waitFor } from '../harness/processes.js';

const IMAGE = 'jetlet/busybox:1.35';
/** The same local image under another reference: a real image change that needs no registry. */
const OTHER_IMAGE = 'docker.io/jetlet/busybox:1.35';

const web = (image: string, labels: Record<string, string>): string =>
  JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', labels },
    spec: { terminationGracePeriodSeconds: 2, containers: [{ name: 'main', image, command: ['sleep', '3600'], ports: [{ containerPort: 80 }] }] },
  });

/** Reads a watch's frames until its object is DELETED (the connection is closed then). */
async function watchUntilDeleted(response: Response): Promise<Array<{ type: string; object: Pod }>> {
  assert.equal(response.status, 200);
  const frames: Array<{ type: string; object: Pod }> = [];
  const decoder = new TextDecoder();
  let buffered = '';
  reading: for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    buffered += decoder.decode(chunk, { stream: true });
    let newline: number;
    while ((newline = buffered.indexOf('\n')) !== -1) {
      const line = buffered.slice(0, newline).trim();
      buffered = buffered.slice(newline + 1);
      if (!line) continue;
      const frame = JSON.parse(line) as { type: string; object: Pod };
      frames.push(frame);
      if (frame.type === 'DELETED') break reading;
    }
  }
  // Leaving the loop early cancels the response body, which closes the watch.
  return frames;
}

/** Writes as the real kubectl (v1.32) sends them, against a running API, scheduler and agent. */
describe('kubectl writes', () => {
  let cluster: Cluster;
  let kubectl: Kubectl;
  let node: string;

  before(async () => {
    cluster = await Cluster.start();
    node = uniqueName('kubectl');
    await cluster.startAgent(node);
    kubectl = new Kubectl(cluster.apiUrl);
  });

  after(async () => {
    kubectl?.dispose();
    await cluster?.stop();
  });

  const pod = async (name: string): Promise<Pod> => JSON.parse(await kubectl.ok(['get', 'pod', name, '-o', 'json'])) as Pod;

  it('answers the health endpoints and version as the API server does', async () => {
    const ready = await fetch(`${cluster.apiUrl}/readyz?verbose`);
    assert.equal(ready.status, 200);
    assert.match(await ready.text(), /\[\+\]ping ok\n[\s\S]*readyz check passed/);
    for (const path of ['/healthz', '/livez', '/livez/ping']) assert.equal(await (await fetch(`${cluster.apiUrl}${path}`)).text(), 'ok', path);
    const version = JSON.parse(await kubectl.ok(['version', '-o', 'json'])) as { serverVersion: { major: string; minor: string } };
    assert.deepEqual([version.serverVersion.major, version.serverVersion.minor], ['1', '32']);
  });

  it('runs `kubectl run` and shows the defaults Kubernetes fills in', async () => {
    assert.equal((await kubectl.ok(['run', 'runner', `--image=${IMAGE}`, '--restart=Never', '--', 'sleep', '600'])).trim(), 'pod/runner created');
    const sut = await pod('runner');
    assert.equal(sut.spec.dnsPolicy, 'ClusterFirst');
    assert.equal(sut.spec.schedulerName, 'default-scheduler');
    assert.equal(sut.spec.enableServiceLinks, true);
    assert.deepEqual(sut.spec.securityContext, {});
    assert.equal(sut.spec.restartPolicy, 'Never');
    await cluster.waitForRunning('default', 'runner');
  });

  it('applies with validation on, applies an image change, then a removed label', async () => {
    assert.equal((await kubectl.ok(['apply', '-f', '-'], web(IMAGE, { app: 'web', tier: 'front' }))).trim(), 'pod/web created');
    const first = await cluster.waitForRunning('default', 'web');
    assert.ok(first.metadata.annotations?.['kubectl.kubernetes.io/last-applied-configuration']);

    assert.equal((await kubectl.ok(['apply', '-f', '-'], web(OTHER_IMAGE, { app: 'web', tier: 'front' }))).trim(), 'pod/web configured');
    const changed = await pod('web');
    assert.equal(changed.spec.containers[0]?.image, OTHER_IMAGE);
    assert.equal(changed.spec.containers[0]?.ports?.[0]?.protocol, 'TCP');
    assert.equal(changed.metadata.generation, 2);
    await cluster.waitForPod(
      'default',
      'web',
      'running the new image',
      (p) => p.status.containerStatuses?.[0]?.image === OTHER_IMAGE && !!p.status.containerStatuses[0].state.running,
    );

    assert.equal((await kubectl.ok(['apply', '-f', '-'], web(OTHER_IMAGE, { app: 'web' }))).trim(), 'pod/web configured');
    assert.deepEqual((await pod('web')).metadata.labels, { app: 'web' });
    assert.equal((await kubectl.ok(['apply', '-f', '-'], web(OTHER_IMAGE, { app: 'web' }))).trim(), 'pod/web unchanged');
  });

  it('applies server-side: field managers, a conflict naming its manager, --force-conflicts, an applied label removed', async () => {
    const ssa = (image: string, labels: Record<string, string>): string =>
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'ssa', labels },
        spec: { terminationGracePeriodSeconds: 2, containers: [{ name: 'main', image, command: ['sleep', '3600'], ports: [{ containerPort: 80 }] }] },
      });
    const managed = async (): Promise<Array<{ manager: string; operation: string; fieldsV1: Record<string, unknown> }>> =>
      (JSON.parse(await kubectl.ok(['get', 'pod', 'ssa', '-o', 'json', '--show-managed-fields'])) as { metadata: { managedFields: [] } }).metadata
        .managedFields;
    const ownsImage = (entry: { fieldsV1: Record<string, unknown> } | undefined): boolean =>
      JSON.stringify(entry?.fieldsV1).includes('"k:{\\"name\\":\\"main\\"}":{".":{},"f:command":{},"f:image":{}');

    assert.equal((await kubectl.ok(['apply', '--server-side', '-f', '-'], ssa(IMAGE, { app: 'ssa', tier: 'x' }))).trim(), 'pod/ssa serverside-applied');
    const applier = (await managed()).find((m) => m.manager === 'kubectl' && m.operation === 'Apply');
    assert.ok(ownsImage(applier), JSON.stringify(applier));
    // Ports are owned by port and protocol, the protocol defaulted for the key.
    assert.match(JSON.stringify(applier?.fieldsV1), /"k:\{\\"containerPort\\":80,\\"protocol\\":\\"TCP\\"\}":\{"\.":\{\},"f:containerPort":\{\}\}/);
    await cluster.waitForRunning('default', 'ssa');
    // Applying the same again changes nothing.
    assert.equal((await kubectl.ok(['apply', '--server-side', '-f', '-'], ssa(IMAGE, { app: 'ssa', tier: 'x' }))).trim(), 'pod/ssa serverside-applied');

    // Another manager takes the image: the applier's next apply of its own image is a conflict naming it, and changes nothing.
    await kubectl.ok(['set', 'image', 'pod/ssa', `main=${OTHER_IMAGE}`]);
    const setter = (await managed()).find((m) => m.manager === 'kubectl-set' && m.operation === 'Update');
    assert.match(JSON.stringify(setter?.fieldsV1), /"f:image":\{\}/);
    const conflict = await kubectl.run(['apply', '--server-side', '-f', '-'], ssa(IMAGE, { app: 'ssa', tier: 'x' }));
    assert.equal(conflict.code, 1, conflict.stdout);
    assert.match(conflict.stderr, /Apply failed with 1 conflict: conflict with "kubectl-set" using v1: \.spec\.containers\[name="main"\]\.image/);
    assert.equal((await pod('ssa')).spec.containers[0]?.image, OTHER_IMAGE);

    // --force-conflicts takes the field back; the other manager, owning nothing else, is gone.
    await kubectl.ok(['apply', '--server-side', '--force-conflicts', '-f', '-'], ssa(IMAGE, { app: 'ssa', tier: 'x' }));
    assert.equal((await pod('ssa')).spec.containers[0]?.image, IMAGE);
    assert.equal(
      (await managed()).find((m) => m.manager === 'kubectl-set'),
      undefined,
    );

    // A label the applier applied before and omits now is removed; one another manager set stays.
    await kubectl.ok(['label', 'pod', 'ssa', 'owner=ops']);
    await kubectl.ok(['apply', '--server-side', '-f', '-'], ssa(IMAGE, { app: 'ssa' }));
    assert.deepEqual((await pod('ssa')).metadata.labels, { app: 'ssa', owner: 'ops' });

    // A dry run conflicts the same way and writes nothing; a create by apply answers 201.
    const dry = await kubectl.run(['apply', '--server-side', '--dry-run=server', '--field-manager=other', '-f', '-'], ssa(OTHER_IMAGE, { app: 'ssa' }));
    assert.match(dry.stderr, /conflict with "kubectl"[\s\S]*\.spec\.containers\[name="main"\]\.image/);
    await kubectl.ok(['apply', '--server-side', '--force-conflicts', '--dry-run=server', '--field-manager=other', '-f', '-'], ssa(OTHER_IMAGE, { app: 'ssa' }));
    // (The pod's status moves on by itself, so what is checked is its spec and owners.)
    assert.equal((await pod('ssa')).spec.containers[0]?.image, IMAGE);
    assert.equal(
      (await managed()).find((m) => m.manager === 'other'),
      undefined,
    );
    const created = await fetch(`${cluster.apiUrl}/api/v1/namespaces/default/pods/ssa-2?fieldManager=curl&dryRun=All`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/apply-patch+yaml' },
      body: `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ssa-2\nspec:\n  containers:\n  - name: main\n    image: ${IMAGE}\n`,
    });
    assert.equal(created.status, 201);
    assert.equal(((await created.json()) as Pod).metadata.managedFields?.[0]?.manager, 'curl');
    const unnamed = await fetch(`${cluster.apiUrl}/api/v1/namespaces/default/pods/ssa-2`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/apply-patch+yaml' },
      body: '{}',
    });
    assert.equal(unnamed.status, 422);
    assert.match(((await unnamed.json()) as { message: string }).message, /fieldManager: Required value/);
  });

  it('replaces, and patches with strategic, merge and JSON patches (a failed test changing nothing)', async () => {
    // A replace carries the resourceVersion it read: a status report landing in between makes it
    // a 409 Conflict, as in Kubernetes, and a client reads again and retries.
    const replaced = await waitFor('a replace that is not overtaken by a status report', async () => {
      const current = await pod('web');
      current.metadata.labels = { ...current.metadata.labels, replaced: 'yes' };
      const result = await kubectl.run(['replace', '-f', '-'], JSON.stringify(current));
      if (result.code === 0) return result.stdout;
      assert.match(result.stderr, /Conflict/, result.stderr);
      return undefined;
    });
    assert.equal(replaced.trim(), 'pod/web replaced');

    await kubectl.ok([
      'patch',
      'pod',
      'web',
      '--type=strategic',
      '-p',
      '{"metadata":{"labels":{"strategic":"1"}},"spec":{"containers":[{"name":"main","image":"jetlet/busybox:1.35"}]}}',
    ]);
    await kubectl.ok(['patch', 'pod', 'web', '--type=merge', '-p', '{"metadata":{"labels":{"merge":"1","replaced":null}}}']);
    await kubectl.ok([
      'patch',
      'pod',
      'web',
      '--type=json',
      '-p',
      '[{"op":"test","path":"/metadata/labels/app","value":"web"},{"op":"add","path":"/metadata/labels/json","value":"1"}]',
    ]);
    const failed = await kubectl.run([
      'patch',
      'pod',
      'web',
      '--type=json',
      '-p',
      '[{"op":"add","path":"/metadata/labels/never","value":"1"},{"op":"test","path":"/metadata/labels/app","value":"db"}]',
    ]);
    assert.notEqual(failed.code, 0);
    assert.match(failed.stderr, /testing value \/metadata\/labels\/app failed/);

    const sut = await pod('web');
    assert.deepEqual(sut.metadata.labels, { app: 'web', strategic: '1', merge: '1', json: '1' });
    assert.equal(sut.spec.containers[0]?.image, IMAGE);
    assert.equal((await kubectl.ok(['set', 'image', 'pod/web', `main=${OTHER_IMAGE}`])).trim(), 'pod/web image updated');
    assert.equal((await pod('web')).spec.containers[0]?.image, OTHER_IMAGE);
  });

  it('validates server-side as kubectl asks: Strict names unknown fields, Warn warns, Ignore drops them, a field jetlet cannot honour is a 422', async () => {
    const typo = JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'typo' },
      spec: { containers: [{ name: 'main', image: IMAGE, imagee: 'x' }] },
    });
    const strict = await kubectl.run(['create', '-f', '-'], typo);
    assert.notEqual(strict.code, 0);
    assert.match(strict.stderr, /strict decoding error: unknown field "spec\.containers\[0\]\.imagee"/);

    const unsupported = await kubectl.run(
      ['create', '--validate=false', '-f', '-'],
      typo
        .replace('"imagee":"x"', '"resizePolicy":[{"resourceName":"cpu","restartPolicy":"NotRequired"}]')
        .replace('"spec":{', '"spec":{"schedulerName":"other",'),
    );
    assert.notEqual(unsupported.code, 0);
    assert.match(
      unsupported.stderr,
      /The Pod "typo" is invalid: \n\* spec\.containers\[0\]\.resizePolicy: field is not supported by jetlet\n\* spec\.schedulerName: Unsupported value: "other"/,
    );
    const { status } = await cluster.request('GET', '/api/v1/namespaces/default/pods/typo');
    assert.equal(status, 404);

    // Warn: accepted without the unknown field, with kube-apiserver's warning, which kubectl prints.
    const warned = await kubectl.run(['create', '--validate=warn', '-f', '-'], typo);
    assert.equal(warned.code, 0, warned.stderr);
    assert.equal(warned.stdout.trim(), 'pod/typo created');
    assert.match(warned.stderr, /^Warning: unknown field "spec\.containers\[0\]\.imagee"$/m);
    const created = await pod('typo');
    assert.equal(created.spec.containers[0]?.image, IMAGE);
    assert.equal((created.spec.containers[0] as unknown as Record<string, unknown>).imagee, undefined);

    // Ignore: dropped silently, on a write of an existing object too.
    const ignored = await kubectl.run(
      ['replace', '--validate=false', '-f', '-'],
      JSON.stringify({ ...JSON.parse(typo), metadata: { name: 'typo', colour: 'red' } }),
    );
    assert.equal(ignored.code, 0, ignored.stderr);
    assert.doesNotMatch(ignored.stderr, /Warning/);
    assert.equal((await pod('typo')).metadata.uid, created.metadata.uid);
    // kubectl patch sends no directive: Warn, the API server's default, judges the patched object.
    const patched = await kubectl.run(['patch', 'pod', 'typo', '--type=merge', '-p', '{"metadata":{"labelz":{"a":"b"}}}']);
    assert.equal(patched.code, 0, patched.stderr);
    assert.match(patched.stderr, /^Warning: unknown field "metadata\.labelz"$/m);
    const strictPatch = await cluster.request<{ code: number; message: string }>(
      'PATCH',
      '/api/v1/namespaces/default/pods/typo?fieldValidation=Strict',
      { spec: { activeDeadlineSecondz: 5 } },
      'application/merge-patch+json',
    );
    assert.equal(strictPatch.status, 400);
    assert.match(strictPatch.body.message, /strict decoding error: unknown field "spec\.activeDeadlineSecondz"/);
    await kubectl.ok(['delete', 'pod', 'typo', '--wait=false']);
  });

  it("judges repeated keys as kube-apiserver's strict decoder does: Strict a 400, Warn a warning each, the last value kept", async () => {
    // `kubectl create -f` decodes the manifest and sends it again, so a repeated key never reaches any API server
    // that way; `create --raw` sends the bytes as written.
    const body =
      '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"first","name":"twice"},' +
      `"spec":{"terminationGracePeriodSeconds":1,"containers":[{"name":"main","image":"${IMAGE}","imagePullPolicy":"Always","imagePullPolicy":"Never","command":["sleep","600"]}]}}`;
    const pods = '/api/v1/namespaces/default/pods';
    const strict = await kubectl.run(['create', '--raw', `${pods}?fieldValidation=Strict`, '-f', '-'], body);
    assert.equal(strict.code, 1, strict.stdout);
    assert.equal(
      strict.stderr.trim(),
      'Error from server (BadRequest): Pod in version "v1" cannot be handled as a Pod: strict decoding error: ' +
        'duplicate field "metadata.name", duplicate field "spec.containers[0].imagePullPolicy"',
    );
    for (const name of ['first', 'twice']) assert.equal((await cluster.request('GET', `${pods}/${name}`)).status, 404, name);

    const warned = await kubectl.run(['create', '--raw', `${pods}?fieldValidation=Warn`, '-f', '-'], body);
    assert.equal(warned.code, 0, warned.stderr);
    assert.match(warned.stderr, /^Warning: duplicate field "metadata\.name"\nWarning: duplicate field "spec\.containers\[0\]\.imagePullPolicy"$/m);
    const created = await pod('twice');
    assert.equal(created.spec.containers[0]?.imagePullPolicy, 'Never');

    // A merge patch is decoded strictly too; Ignore lets the last value win without a word.
    const patch = '{"metadata":{"labels":{"a":"1","a":"2"}}}';
    const strictPatch = await fetch(`${cluster.apiUrl}${pods}/twice?fieldValidation=Strict`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/merge-patch+json' },
      body: patch,
    });
    assert.equal(strictPatch.status, 400);
    assert.match(((await strictPatch.json()) as { message: string }).message, /strict decoding error: duplicate field "metadata\.labels\.a"$/);
    const ignored = await fetch(`${cluster.apiUrl}${pods}/twice?fieldValidation=Ignore`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/merge-patch+json' },
      body: patch,
    });
    assert.equal(ignored.status, 200);
    assert.equal(ignored.headers.get('warning'), null);
    assert.deepEqual((await pod('twice')).metadata.labels, { a: '2' });

    // Server-side apply reads YAML with go-yaml's strict decoder: lines, as kube-apiserver's apply patcher names them.
    const yaml = `apiVersion: v1\nkind: Pod\nmetadata:\n  name: applied\n  name: applied\nspec:\n  containers:\n  - name: main\n    image: ${IMAGE}\n    image: ${OTHER_IMAGE}\n`;
    const apply = (directive: string): Promise<Response> =>
      fetch(`${cluster.apiUrl}${pods}/applied?fieldManager=yaml&dryRun=All&fieldValidation=${directive}`, {
        method: 'PATCH',
        headers: { 'content-type': 'application/apply-patch+yaml' },
        body: yaml,
      });
    const strictApply = await apply('Strict');
    assert.equal(strictApply.status, 400);
    assert.equal(
      ((await strictApply.json()) as { message: string }).message,
      'error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:\n  line 5: key "name" already set in map\n  line 10: key "image" already set in map',
    );
    const warnApply = await apply('Warn');
    assert.equal(warnApply.status, 201);
    assert.equal(warnApply.headers.get('warning'), '299 - "line 5: key \\"name\\" already set in map", 299 - "line 10: key \\"image\\" already set in map"');
    assert.equal(((await warnApply.json()) as Pod).spec.containers[0]?.image, OTHER_IMAGE);
    await kubectl.ok(['delete', 'pod', 'twice', '--wait=false']);
  });

  it('keeps managedFields to what was applied when server-side apply drops an unknown field under Warn', async () => {
    const manifest = JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'dropped', labels: { app: 'dropped' } },
      spec: { terminationGracePeriodSeconds: 1, containers: [{ name: 'main', image: IMAGE, imagee: 'typo', command: ['sleep', '600'] }] },
    });
    const applied = await kubectl.run(['apply', '--server-side', '--validate=warn', '-f', '-'], manifest);
    assert.equal(applied.code, 0, applied.stderr);
    assert.match(applied.stderr, /^Warning: unknown field "spec\.containers\[0\]\.imagee"$/m);
    const sut = JSON.parse(await kubectl.ok(['get', 'pod', 'dropped', '-o', 'json', '--show-managed-fields'])) as Pod & {
      metadata: { managedFields: Array<{ manager: string; operation: string; fieldsV1: Record<string, unknown> }> };
    };
    assert.equal((sut.spec.containers[0] as unknown as Record<string, unknown>).imagee, undefined);
    const owner = sut.metadata.managedFields.find((m) => m.manager === 'kubectl' && m.operation === 'Apply');
    const owned = JSON.stringify(owner?.fieldsV1);
    assert.match(owned, /"k:\{\\"name\\":\\"main\\"\}":\{"\.":\{\},"f:command":\{\},"f:image":\{\},"f:name":\{\}\}/);
    assert.doesNotMatch(owned, /imagee/);
    assert.match(owned, /"f:labels":\{"\.":\{\},"f:app":\{\}\}/);
    await kubectl.ok(['delete', 'pod', 'dropped', '--wait=false']);
  });

  it('explains pod fields from the OpenAPI document', async () => {
    const spec = await kubectl.ok(['explain', 'pod.spec']);
    assert.match(spec, /KIND:\s+Pod/);
    assert.match(spec, /FIELD:\s+spec\s+<PodSpec>/);
    assert.match(spec, /containers\s+<\[\]Container> -required-/);
    assert.match(spec, /restartPolicy\s+<string>/);
    assert.match(spec, /terminationGracePeriodSeconds\s+<integer>/);
    const sut = await kubectl.ok(['explain', 'pod.spec.containers']);
    assert.match(sut, /KIND:\s+Pod/);
    assert.match(sut, /image\s+<string>/);
    assert.match(sut, /ports\s+<\[\]ContainerPort>/);
  });

  it('describes a pod with its events', async () => {
    const sut = await kubectl.ok(['describe', 'pod', 'web']);
    assert.match(sut, /^Name:\s+web$/m);
    assert.match(sut, /^Events:/m);
    assert.match(sut, /Started/);
  });

  it('answers a missing object with a 404 that carries details', async () => {
    const { status, body } = await cluster.request<{ reason: string; details?: { name?: string; kind?: string } }>(
      'GET',
      '/api/v1/namespaces/default/pods/nope',
    );
    assert.equal(status, 404);
    assert.deepEqual(body.details, { name: 'nope', kind: 'pods' });
    // kubectl debug reads such details; it now finds the ephemeralcontainers subresource and adds its container.
    const debug = await kubectl.run(['debug', 'web', `--image=${IMAGE}`, '--image-pull-policy=Never', '--', 'true']);
    assert.equal(debug.code, 0, debug.stderr);
    assert.doesNotMatch(debug.stderr, /panic/);
  });

  it('keeps namespaces as objects: system ones present, a pod in a missing one is 404, deletion terminates its pods', async () => {
    const listed = await kubectl.ok(['get', 'namespaces', '-o', 'name']);
    for (const ns of ['default', 'kube-system', 'kube-public', 'kube-node-lease']) assert.match(listed, new RegExp(`^namespace/${ns}$`, 'm'));

    const missing = await kubectl.run(['run', 'lost', `--image=${IMAGE}`, '-n', 'nowhere']);
    assert.notEqual(missing.code, 0);
    assert.match(missing.stderr, /Error from server \(NotFound\): namespaces "nowhere" not found/);

    assert.equal((await kubectl.ok(['create', 'namespace', 'team-a'])).trim(), 'namespace/team-a created');
    await kubectl.ok(['run', 'member', `--image=${IMAGE}`, '-n', 'team-a', '--restart=Never', '--', 'sleep', '600']);
    const member = await cluster.waitForRunning('team-a', 'member');
    assert.equal((await kubectl.ok(['delete', 'namespace', 'team-a', '--wait=false'])).trim(), 'namespace "team-a" deleted');
    const terminating = JSON.parse(await kubectl.ok(['get', 'namespace', 'team-a', '-o', 'json'])) as { status: { phase: string } };
    assert.equal(terminating.status.phase, 'Terminating');
    const refused = await kubectl.run(['run', 'late', `--image=${IMAGE}`, '-n', 'team-a']);
    assert.match(refused.stderr, /unable to create new content in namespace team-a because it is being terminated/);

    await cluster.waitForGone('team-a', 'member');
    await cluster.withLogs(
      waitFor('namespace team-a to be removed', async () => (await cluster.request('GET', '/api/v1/namespaces/team-a')).status === 404, 60_000),
    );
    assert.deepEqual(await cluster.podContainers(node, member.metadata.uid ?? ''), []);
    const forbidden = await kubectl.run(['delete', 'namespace', 'default']);
    assert.match(forbidden.stderr, /namespaces "default" is forbidden: this namespace may not be deleted/);
  });

  it('cordons with the unschedulable taint, drains by eviction, and uncordons', async () => {
    await kubectl.ok(['cordon', node]);
    const cordoned = JSON.parse(await kubectl.ok(['get', 'node', node, '-o', 'json'])) as {
      spec: { unschedulable?: boolean; taints?: Array<{ key: string; effect: string }> };
    };
    assert.equal(cordoned.spec.unschedulable, true);
    assert.deepEqual(
      cordoned.spec.taints?.map((t) => `${t.key}:${t.effect}`),
      ['node.kubernetes.io/unschedulable:NoSchedule'],
    );

    // What the evicted pod goes through, from a watch opened before the drain.
    const { status: listed, body: list } = await cluster.request<{ metadata: { resourceVersion: string } }>('GET', '/api/v1/namespaces/default/pods');
    assert.equal(listed, 200);
    const watch = await fetch(
      `${cluster.apiUrl}/api/v1/namespaces/default/pods?watch=true&fieldSelector=metadata.name%3Dweb&resourceVersion=${list.metadata.resourceVersion}&timeoutSeconds=120`,
    );
    const frames = watchUntilDeleted(watch);

    const drained = await kubectl.run(['drain', node, '--force', '--grace-period=1', '--timeout=90s']);
    assert.equal(drained.code, 0, drained.stderr);
    assert.match(drained.stdout, /evicting pod default\/web/);
    const seen = await frames;
    const disruption = seen.flatMap((f) => f.object.status.conditions ?? []).find((c) => c.type === 'DisruptionTarget');
    assert.deepEqual(
      { status: disruption?.status, reason: disruption?.reason, message: disruption?.message },
      { status: 'True', reason: 'EvictionByEvictionAPI', message: 'Eviction API: evicting' },
    );
    assert.match(drained.stdout, new RegExp(`node/${node} drained`));
    const left = JSON.parse(await kubectl.ok(['get', 'pods', '-o', 'json'])) as { items: Pod[] };
    assert.deepEqual(left.items, []);

    await kubectl.ok(['uncordon', node]);
    const uncordoned = JSON.parse(await kubectl.ok(['get', 'node', node, '-o', 'json'])) as { spec: { unschedulable?: boolean; taints?: unknown[] } };
    assert.equal(uncordoned.spec.unschedulable ?? false, false);
    assert.equal(uncordoned.spec.taints, undefined);
  });
});
