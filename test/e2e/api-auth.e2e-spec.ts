import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { jetstream } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { token, type Pod } from '#contracts';
import { Cluster, uniqueName } from '../harness/cluster.js';
import { Kubectl } from '../harness/kubectl.js';
import { waitFor } from '../harness/processes.js';

const BUSYBOX = 'jetlet/busybox:1.35';

interface Status {
  kind: string;
  code: number;
  reason: string;
  message: string;
}

function pod(name: string, extra: { spec?: object; container?: object } = {}): object {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: { terminationGracePeriodSeconds: 1, containers: [{ name: 'main', image: BUSYBOX, command: ['sleep', '3600'], ...extra.container }], ...extra.spec },
  };
}

/** An HTTP upgrade request, as kubectl exec's WebSocket opens: the status line the API answers with. */
function upgrade(url: string, path: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, {
      headers: { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==', ...headers },
    });
    req.once('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.once('upgrade', (res, socket) => {
      socket.destroy();
      resolve(res.statusCode ?? 0);
    });
    req.once('error', reject);
    req.end();
  });
}

/**
 * The API as kube-apiserver secures it: bearer tokens, RBAC with Kubernetes' 401 and 403,
 * SelfSubjectAccessReview for `kubectl auth can-i`, audit facts on the bus, and Pod Security
 * admission in the API and again on the node. One cluster, one agent.
 */
describe('API authentication, authorization, audit and Pod Security', { timeout: 300_000 }, () => {
  let cluster: Cluster;
  const node = uniqueName('auth-node');
  const kubectl = {} as Record<'admin' | 'viewer' | 'editor', Kubectl>;

  before(async () => {
    cluster = await Cluster.start({}, { secure: true });
    await cluster.startAgent(node);
    await cluster.ensureNamespace('team-a');
    const trusted = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'trusted', labels: { 'pod-security.kubernetes.io/enforce': 'privileged' } } };
    assert.equal((await cluster.request('POST', '/api/v1/namespaces', trusted)).status, 201);
    const strict = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'strict', labels: { 'pod-security.kubernetes.io/enforce': 'restricted' } } };
    assert.equal((await cluster.request('POST', '/api/v1/namespaces', strict)).status, 201);
    for (const user of ['admin', 'viewer', 'editor'] as const) kubectl[user] = Kubectl.as(cluster, user);
  });

  after(async () => {
    for (const k of Object.values(kubectl)) k.dispose();
    await cluster?.stop();
  });

  it('answers 401 with a Status to every request without a valid token, but health and version', async () => {
    const paths = [
      ['GET', '/api/v1/pods'],
      ['GET', '/api/v1/namespaces/default/pods?watch=true'],
      ['GET', '/api/v1/watch/nodes'],
      ['POST', '/api/v1/namespaces/default/pods'],
      ['DELETE', '/api/v1/namespaces/default/pods/web'],
      ['GET', '/api/v1/namespaces/default/pods/web/log'],
      ['GET', '/api'],
      ['GET', '/apis'],
      ['GET', '/openapi/v2'],
      ['GET', '/metrics'],
      ['POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews'],
      ['GET', '/no/such/path'],
    ];
    const attempts: Array<Record<string, string>> = [
      {},
      { authorization: 'Bearer not-a-token' },
      { authorization: `Basic ${Buffer.from('admin:admin').toString('base64')}` },
    ];
    for (const headers of attempts) {
      for (const [method, path] of paths) {
        const response = await fetch(`${cluster.apiUrl}${path}`, {
          method,
          headers: { ...headers, 'content-type': 'application/json' },
          ...(method === 'POST' ? { body: '{}' } : {}),
        });
        assert.equal(response.status, 401, `${method} ${path} with ${JSON.stringify(headers)}`);
        const body = (await response.json()) as Status;
        assert.deepEqual([body.kind, body.reason, body.message, body.code], ['Status', 'Unauthorized', 'Unauthorized', 401]);
      }
    }
    for (const path of ['/healthz', '/livez', '/readyz', '/version']) assert.equal((await fetch(`${cluster.apiUrl}${path}`)).status, 200, path);
  });

  it('puts the same check in front of every upgrade (exec, attach, port-forward), before any handler', async () => {
    const exec = '/api/v1/namespaces/default/pods/web/exec?command=sh&stdin=true&stdout=true';
    assert.equal(await upgrade(cluster.apiUrl, exec), 401);
    assert.equal(await upgrade(cluster.apiUrl, '/api/v1/namespaces/default/pods/web/portforward', { authorization: 'Bearer wrong' }), 401);
    assert.equal(await upgrade(cluster.apiUrl, exec, cluster.authHeaders('viewer')), 403, 'view may not exec');
    const encoded = Buffer.from(cluster.credentials!.tokens.viewer).toString('base64url');
    assert.equal(await upgrade(cluster.apiUrl, exec, { 'sec-websocket-protocol': `v5.channel.k8s.io, base64url.bearer.authorization.k8s.io.${encoded}` }), 403);
    assert.notEqual(await upgrade(cluster.apiUrl, exec, cluster.authHeaders('admin')), 401);
  });

  it('lets kubectl with a view token get and watch pods but not delete them; without a token it is refused', async () => {
    await cluster.createPod('default', { ...pod('web'), spec: { ...(pod('web') as { spec: object }).spec, nodeName: node } });
    const list = await kubectl.viewer.ok(['get', 'pods', '-o', 'name']);
    assert.match(list, /^pod\/web$/m);
    const watch = await kubectl.viewer.run(['get', 'pods', '--watch', '--request-timeout=3s', '-o', 'name']);
    assert.match(watch.stdout, /pod\/web/, `watch printed: ${watch.stdout} ${watch.stderr}`);
    assert.doesNotMatch(watch.stderr, /forbidden|Unauthorized/i);
    const remove = await kubectl.viewer.run(['delete', 'pod', 'web', '--wait=false']);
    assert.notEqual(remove.code, 0);
    assert.match(
      remove.stderr,
      /Error from server \(Forbidden\): pods "web" is forbidden: User "viewer" cannot delete resource "pods" in API group "" in the namespace "default"/,
    );
    const nodes = await kubectl.viewer.run(['get', 'nodes']);
    assert.match(nodes.stderr, /nodes is forbidden: User "viewer" cannot list resource "nodes" in API group "" at the cluster scope/);
    // Without a token (kubectl would prompt for a password, so it gets one the API does not take): 401.
    const anonymous = new Kubectl(cluster.secureUrl!, cluster.kubeconfig('viewer').replace(/\{token: "[^"]+"\}/, '{username: viewer, password: guess}'));
    try {
      const refused = await anonymous.run(['get', 'pods']);
      assert.notEqual(refused.code, 0);
      assert.match(refused.stderr, /You must be logged in to the server \((Unauthorized|the server has asked for the client to provide credentials)\)/);
    } finally {
      anonymous.dispose();
    }
  });

  it('authenticates client certificates as the x509 authenticator does: CN the user, O the groups, beside tokens', async () => {
    // No credentials in the kubeconfig: kubectl's --client-certificate and --client-key flags carry them.
    const kubeconfig = cluster.kubeconfig('viewer').replace(/\{token: "[^"]+"\}/, '{}');
    const bare = new Kubectl(cluster.secureUrl!, kubeconfig);
    const credentials = cluster.credentials!;
    const as = (name: 'admin' | 'carol' | 'stranger', args: string[], extra: string[] = []) => {
      const { cert, key } = credentials.clientCertificate(name);
      return bare.run(['--client-certificate', cert, '--client-key', key, ...extra, ...args]);
    };
    try {
      // O=system:masters: cluster-admin.
      const admin = await as('admin', ['get', 'nodes', '-o', 'name']);
      assert.equal(admin.code, 0, admin.stderr);
      assert.match(admin.stdout, new RegExp(`^node/${node}$`, 'm'));
      assert.equal((await as('admin', ['auth', 'can-i', 'delete', 'pods', '-A'])).stdout.trim(), 'yes');
      // Writes too.
      const created = await as('admin', ['run', 'by-cert', `--image=${BUSYBOX}`, '--restart=Never', '--', 'sleep', '60']);
      assert.equal(created.code, 0, created.stderr);

      // Signed by a CA the API does not trust: 401, whatever its subject says.
      const stranger = await as('stranger', ['get', 'pods']);
      assert.equal(stranger.code, 1);
      assert.match(stranger.stderr, /You must be logged in to the server \(Unauthorized\)/);
      // ... unless a token names the caller, as kube-apiserver's union of authenticators does.
      const withToken = await as('stranger', ['get', 'pods', '-o', 'name'], ['--token', credentials.tokens.viewer]);
      assert.equal(withToken.code, 0, withToken.stderr);
      assert.match(withToken.stdout, /^pod\/by-cert$/m);

      // A trusted certificate of a user no binding names: RBAC's 403 with its CN.
      const carol = await as('carol', ['get', 'pods']);
      assert.equal(carol.code, 1);
      assert.match(
        carol.stderr,
        /Error from server \(Forbidden\): pods is forbidden: User "carol" cannot list resource "pods" in API group "" in the namespace "default"/,
      );
      assert.equal((await as('carol', ['auth', 'can-i', 'get', 'pods'])).stdout.trim(), 'no');
    } finally {
      bare.dispose();
    }
  });

  it('answers kubectl auth can-i as the role bindings say', async () => {
    const canI = async (user: 'admin' | 'viewer' | 'editor', ...args: string[]): Promise<string> =>
      (await kubectl[user].run(['auth', 'can-i', ...args])).stdout.trim();
    assert.equal(await canI('viewer', 'get', 'pods'), 'yes');
    assert.equal(await canI('viewer', 'watch', 'pods', '-A'), 'yes');
    assert.equal(await canI('viewer', 'delete', 'pods'), 'no');
    assert.equal(await canI('viewer', 'get', 'secrets'), 'no');
    assert.equal(await canI('viewer', 'get', '/metrics'), 'no');
    assert.equal(await canI('editor', 'delete', 'pods', '-n', 'team-a'), 'yes');
    assert.equal(await canI('editor', 'create', 'pods', '--subresource=exec', '-n', 'team-a'), 'yes');
    assert.equal(await canI('editor', 'delete', 'pods', '-n', 'default'), 'no');
    assert.equal(await canI('admin', '*', '*'), 'yes');
    assert.equal(await canI('admin', 'get', '/metrics'), 'yes');
  });

  it('records who asked for each write on the bus, refused ones included, and jetctl timeline shows who deleted a pod', async () => {
    assert.equal(
      (await fetch(`${cluster.apiUrl}/api/v1/namespaces/default/pods/web`, { method: 'DELETE', headers: cluster.authHeaders('viewer') })).status,
      403,
    );
    assert.equal((await cluster.request('DELETE', '/api/v1/namespaces/default/pods/web')).status, 200);
    const timeline = await waitFor('the audit records in the timeline', async () => {
      const result = await cluster.jetctl('timeline', 'default/web', '--nats', cluster.nats.url);
      return /admin delete pods web: 200/.test(result.stdout) ? result.stdout : undefined;
    });
    assert.match(timeline, /api\s.*RequestAudited\s+admin create pods web: 201/);
    assert.match(timeline, /viewer delete pods web: 403 Forbidden/);
    const json = JSON.parse((await cluster.jetctl('timeline', 'default/web', '--nats', cluster.nats.url, '-o', 'json')).stdout) as Array<{
      subject: string;
      envelope?: { type: string; data: { user: string; groups: string[]; verb: string; code: number; objectUid?: string } };
    }>;
    const deletion = json.find((m) => m.envelope?.type === 'RequestAudited' && m.envelope.data.verb === 'delete' && m.envelope.data.code === 200);
    assert.equal(deletion?.subject, 'jetlet.audit.pods.default.web');
    assert.deepEqual(deletion?.envelope?.data.groups, ['system:masters', 'system:authenticated']);
    assert.match(deletion?.envelope?.data.objectUid ?? '', /^[0-9a-f-]{36}$/);
  });

  it('refuses a privileged pod in a baseline namespace and accepts it in a privileged one, with Kubernetes messages', async () => {
    const hostPort = pod('hp', { container: { ports: [{ containerPort: 8080, hostPort: 18080 }] } });
    const privileged = pod('priv', { container: { securityContext: { privileged: true } }, spec: { hostNetwork: true } });
    const refused = await cluster.request<Status>('POST', '/api/v1/namespaces/default/pods', hostPort);
    assert.equal(refused.status, 403);
    assert.equal(refused.body.message, 'pods "hp" is forbidden: violates PodSecurity "baseline:latest": hostPort (container "main" uses hostPort 18080)');
    const root = await cluster.request<Status>('POST', '/api/v1/namespaces/default/pods', privileged);
    assert.equal(root.status, 403);
    assert.equal(
      root.body.message,
      'pods "priv" is forbidden: violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true), privileged (container "main" must not set securityContext.privileged=true)',
    );
    const viaKubectl = await kubectl.admin.run(['apply', '-f', '-'], JSON.stringify(hostPort));
    assert.match(viaKubectl.stderr, /violates PodSecurity "baseline:latest": hostPort/);
    assert.equal((await cluster.request('POST', '/api/v1/namespaces/trusted/pods', hostPort)).status, 201, 'hostPort in a privileged namespace');
    // A privileged namespace lets securityContext.privileged through admission; whether the node can run it is the contract's call.
    const trustedRoot = await cluster.request<Status>('POST', '/api/v1/namespaces/trusted/pods', privileged);
    assert.doesNotMatch(trustedRoot.body.message ?? '', /PodSecurity/);
    const plain = await cluster.request<Status>('POST', '/api/v1/namespaces/strict/pods', pod('plain'));
    assert.equal(plain.status, 403);
    assert.match(plain.body.message, /violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false .*runAsNonRoot != true/);
  });

  it('has the node refuse, with an event, a forged assignment that breaks its namespace policy', async () => {
    const uid = '0d6c3c8e-6a1f-4c55-9a1e-5b2f3e4d5c6a';
    const forged = {
      id: `forged-${uid}`,
      type: 'PodAssigned',
      version: 1,
      time: new Date().toISOString(),
      source: { component: 'scheduler' },
      correlationId: uid,
      data: {
        pod: {
          metadata: { name: 'escalate', namespace: 'default', uid },
          spec: {
            nodeName: node,
            terminationGracePeriodSeconds: 1,
            containers: [{ name: 'main', image: BUSYBOX, command: ['sleep', '3600'], ports: [{ containerPort: 80, hostPort: 18081 }] }],
          },
        },
      },
    };
    const nc = await connect({ servers: cluster.nats.url });
    try {
      const events: Array<{ type: string; data: { reason: string; message: string } }> = [];
      nc.subscribe(`jetlet.events.${token(node)}.${uid}`, { callback: (_e, msg) => void events.push(msg.json()) });
      await jetstream(nc).publish(`jetlet.assign.${token(node)}.${uid}`, JSON.stringify(forged));
      const event = await waitFor('the node to refuse the forged pod', () =>
        events.find((e) => e.type === 'PodEvent' && e.data.reason === 'FailedPodSecurity'),
      );
      assert.equal(event.data.message, 'pods "escalate" is forbidden: violates PodSecurity "baseline:latest": hostPort (container "main" uses hostPort 18081)');
    } finally {
      await nc.close();
    }
    assert.deepEqual(await cluster.podContainers(node, uid), [], 'nothing of the forged pod runs');
    // The same node runs a host port where the namespace (as the API recorded it on the bus) allows it.
    const allowed = pod('allowed', { container: { ports: [{ containerPort: 80, hostPort: 18082 }] }, spec: { nodeName: node } });
    await cluster.createPod('trusted', allowed);
    await cluster.waitForRunning('trusted', 'allowed', 90_000);
  });

  it('keeps the agent /pods and /containerLogs closed to everyone when no AGENT_TOKEN is set', async () => {
    for (const path of ['/pods', '/runningpods', '/containerLogs/default/web/main']) {
      assert.equal((await fetch(`${cluster.agentUrl(node)}${path}`)).status, 401, path);
      assert.equal((await fetch(`${cluster.agentUrl(node)}${path}`, { headers: { authorization: 'Bearer anything' } })).status, 401, path);
    }
    assert.equal((await fetch(`${cluster.agentUrl(node)}/healthz`)).status, 200);
  });

  it('lets a RoleBinding grant edit in its namespace only', async () => {
    const post = (namespace: string): Promise<Response> =>
      fetch(`${cluster.apiUrl}/api/v1/namespaces/${namespace}/pods`, {
        method: 'POST',
        headers: { ...cluster.authHeaders('editor'), 'content-type': 'application/json' },
        body: JSON.stringify(pod('mine')),
      });
    const created = await post('team-a');
    assert.equal(created.status, 201);
    assert.equal(((await created.json()) as Pod).metadata.name, 'mine');
    const elsewhere = await post('default');
    assert.equal(elsewhere.status, 403);
    assert.equal(
      ((await elsewhere.json()) as Status).message,
      'pods is forbidden: User "editor" cannot create resource "pods" in API group "" in the namespace "default"',
    );
  });
});
