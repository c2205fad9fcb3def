import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Cluster, uniqueName } from '../harness/cluster.js';
import { waitFor } from '../harness/processes.js';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

const IMAGE = 'jetlet/busybox:1.35';

/** The real kubectl (v1.32): containers with a stdin and a terminal, `attach -i`, `run -i`. */
describe('kubectl attach -i, run -i and debug through the agent', () => {
  let cluster: Cluster;
  const node = uniqueName('debug-node');
  let dir: string;

  const env = (): NodeJS.ProcessEnv => ({ ...process.env, KUBECONFIG: join(dir, 'none') });
  const kubectlArgs = (args: string[]): string[] => ['--server', cluster.apiUrl, '--cache-dir', join(dir, 'cache'), ...args];

  const collect = (child: ChildProcess, timeoutMs = 90_000): Promise<Run> => {
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

  const kubectl = (args: string[], stdin?: string): Promise<Run> => {
    const child = spawn('kubectl', kubectlArgs(args), { cwd: dir, env: env(), stdio: ['pipe', 'pipe', 'pipe'] });
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(stdin ?? '');
    return collect(child);
  };

  /** kubectl under a real pseudo-terminal (`script`), typing `input` once `ready` shows in its output. */
  const underTerminal = async (args: string[], ready: RegExp, input: string): Promise<Run> => {
    const command = ['kubectl', ...kubectlArgs(args)].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ');
    const child = spawn('script', ['-qec', command, '/dev/null'], { cwd: dir, env: env(), stdio: ['pipe', 'pipe', 'pipe'] });
    let seen = '';
    child.stdout?.on('data', (c: Buffer) => (seen += c.toString()));
    const done = collect(child);
    await waitFor(`${ready.source} under the terminal`, () => Promise.resolve(ready.test(seen)), 60_000);
    child.stdin?.write(input);
    const run = await done;
    return { ...run, stdout: seen };
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'jetlet-debug-'));
    cluster = await Cluster.start();
    await cluster.startAgent(node);
  });

  after(async () => {
    await cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps stdin, stdinOnce and tty in the pod and creates the container with them', async () => {
    await cluster.createPod('default', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'reader' },
      spec: {
        terminationGracePeriodSeconds: 1,
        restartPolicy: 'Never',
        containers: [{ name: 'main', image: IMAGE, command: ['sh', '-c', 'while read l; do echo "got $l"; done; echo eof'], stdin: true, stdinOnce: true }],
      },
    });
    await cluster.waitForRunning('default', 'reader', 120_000);
    const shown = await kubectl([
      'get',
      'pod',
      'reader',
      '-o',
      'jsonpath={.spec.containers[0].stdin} {.spec.containers[0].stdinOnce} {.spec.containers[0].tty}',
    ]);
    assert.equal(shown.code, 0, shown.stderr);
    assert.equal(shown.stdout, 'true true ');
    const pod = await cluster.getPod('default', 'reader');
    const [container] = (await cluster.podContainers(node, pod?.metadata.uid ?? '')).filter((c) => c.Labels['io.jetlet.kind'] === 'container');
    const inspected = await cluster.dockerCli('inspect', '--format', '{{.Config.OpenStdin}} {{.Config.StdinOnce}} {{.Config.Tty}}', container?.Id ?? '');
    assert.equal(inspected.stdout.trim(), 'true true false');

    const refused = await kubectl(
      ['apply', '-f', '-'],
      JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'bad-tty' }, spec: { containers: [{ name: 'main', image: IMAGE, tty: 'yes' }] } }),
    );
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /spec\.containers\[0\]\.tty/);
  });

  it("writes to the container's stdin with attach -i, whose end of file the container reads", async () => {
    const attached = await kubectl(['attach', '-i', 'reader'], 'one\ntwo\n');
    assert.equal(attached.code, 0, attached.stderr);
    assert.match(attached.stdout, /got one\ngot two\neof\n/);
    await cluster.waitForPod('default', 'reader', 'Succeeded', (p) => p.status?.phase === 'Succeeded', 60_000);
  });

  it('runs a pod with run -i --rm: stdin in, output and exit code back, the pod gone after', async () => {
    const name = uniqueName('once');
    const run = await kubectl(
      ['run', '-i', '--rm', '--restart=Never', name, `--image=${IMAGE}`, '--image-pull-policy=Never', '--', 'sh', '-c', 'read l; echo got $l; exit 3'],
      'hello\n',
    );
    assert.equal(run.code, 3, run.stderr);
    assert.match(run.stdout, /got hello/);
    await cluster.waitForGone('default', name, 60_000);
  });

  it('gives attach -it a terminal to a container created with one', async () => {
    await cluster.createPod('default', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'console' },
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [{ name: 'main', image: IMAGE, command: ['sh', '-c', 'read l; echo "tty=$(tty) got $l"'], stdin: true, stdinOnce: true, tty: true }],
      },
    });
    await cluster.waitForRunning('default', 'console', 120_000);
    const run = await underTerminal(['attach', '-it', 'console'], /try pressing enter/, 'typed\r');
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.match(run.stdout, /tty=\/dev\/pts\/\d+ got typed/);
  });
  /** PATCHes a pod's ephemeralcontainers subresource as JSON merge patch or strategic merge patch. */
  const patchEphemeral = async (
    name: string,
    body: object,
    type = 'application/strategic-merge-patch+json',
  ): Promise<{ status: number; body: Record<string, unknown> }> => {
    const res = await fetch(`${cluster.apiUrl}/api/v1/namespaces/default/pods/${name}/ephemeralcontainers`, {
      method: 'PATCH',
      headers: { ...cluster.authHeaders(), 'content-type': type },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  it("debugs a pod with kubectl debug -it: an ephemeral container in the target's process namespace, shown in the status, run once", async () => {
    await cluster.createPod('default', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'target' },
      spec: { terminationGracePeriodSeconds: 1, containers: [{ name: 'main', image: IMAGE, command: ['sleep', '3601'] }] },
    });
    await cluster.waitForRunning('default', 'target', 120_000);
    const run = await underTerminal(
      ['debug', '-it', 'target', `--image=${IMAGE}`, '--image-pull-policy=Never', '--target=main', '--', 'sh'],
      /try pressing enter/,
      'ps -o pid,args; exit 0\r',
    );
    assert.equal(run.code, 0, run.stdout + run.stderr);
    // The target's main process is pid 1 of the namespace the debug shell joined.
    assert.match(run.stdout, /\n\s*1 sleep 3601/);
    const name = /debugger-[a-z0-9]+/.exec(run.stdout)?.[0] ?? '';
    assert.notEqual(name, '', run.stdout);

    const pod = await cluster.waitForPod('default', 'target', `${name} terminated`, (p) => {
      const status = (p.status as { ephemeralContainerStatuses?: Array<{ name: string; state: { terminated?: { exitCode: number } } }> } | undefined)
        ?.ephemeralContainerStatuses?.[0];
      return status?.name === name && status.state.terminated?.exitCode === 0;
    });
    assert.equal(pod.status?.phase, 'Running');
    const shown = await kubectl([
      'get',
      'pod',
      'target',
      '-o',
      'jsonpath={.spec.ephemeralContainers[0].targetContainerName} {.status.ephemeralContainerStatuses[0].state.terminated.reason}',
    ]);
    assert.equal(shown.stdout, 'main Completed', shown.stderr);
    const described = await kubectl(['describe', 'pod', 'target']);
    assert.equal(described.code, 0, described.stderr);
    assert.match(described.stdout, new RegExp(`Ephemeral Containers:\\n\\s+${name}:`));
    const logs = await kubectl(['logs', 'target', '-c', name]);
    assert.equal(logs.code, 0, logs.stderr);
    assert.match(logs.stdout, /1 sleep 3601/);
    // Run once: after more passes of the agent there is still exactly one container for it, and it stays ended.
    await cluster.waitForPasses(node, 3);
    const runs = (await cluster.podContainers(node, pod.metadata.uid ?? '')).filter((c) => c.Labels['io.jetlet.container.name'] === name);
    assert.equal(runs.length, 1);
    assert.equal(runs[0]?.State, 'exited');
  });

  it('refuses ephemeral containers with ports, probes or resources, on create, and any change to one that exists, naming each field', async () => {
    const bad = await patchEphemeral('target', {
      spec: {
        ephemeralContainers: [
          {
            name: 'bad',
            image: IMAGE,
            ports: [{ containerPort: 80 }],
            readinessProbe: { exec: { command: ['true'] } },
            resources: { limits: { cpu: '100m' } },
            targetContainerName: 'nope',
          },
        ],
      },
    });
    assert.equal(bad.status, 422, JSON.stringify(bad.body));
    // Whichever index the patch gave it, each bad field of that one container is named.
    const fields = ((bad.body.details as { causes: Array<{ field: string }> }).causes ?? []).map((c) => c.field.replace(/\[\d+\]/, '[i]')).sort();
    assert.deepEqual(fields, [
      'spec.ephemeralContainers[i].ports',
      'spec.ephemeralContainers[i].readinessProbe',
      'spec.ephemeralContainers[i].resources',
      'spec.ephemeralContainers[i].targetContainerName',
    ]);

    const changed = await patchEphemeral('target', { spec: { ephemeralContainers: [{ name: 'x', image: IMAGE }] } }, 'application/merge-patch+json');
    assert.equal(changed.status, 422, JSON.stringify(changed.body));
    assert.match(String(changed.body.message), /may not be removed/);

    const created = await kubectl(
      ['create', '-f', '-'],
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'born-debugged' },
        spec: { containers: [{ name: 'main', image: IMAGE }], ephemeralContainers: [{ name: 'dbg', image: IMAGE }] },
      }),
    );
    assert.notEqual(created.code, 0);
    assert.match(created.stderr, /spec\.ephemeralContainers: Forbidden: cannot be set on create/);
  });
});
