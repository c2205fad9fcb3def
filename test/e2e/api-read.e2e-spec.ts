import assert from 'node:assert/strict';
import { Agent as HttpAgent, get as httpGet, type IncomingHttpHeaders } from 'node:http';
import { after, before, describe, it } from 'node:test';
import type { Pod } from '#contracts';
import { Cluster } from '../harness/cluster.js';
import { waitFor } from '../harness/processes.js';

interface Frame {
  type: string;
  object: {
    kind?: string;
    metadata: { name?: string; resourceVersion?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
    code?: number;
    reason?: string;
    message?: string;
    rows?: Array<{ cells: unknown[] }>;
  };
}

/** A watch as a client sees it: the frames so far, and whether the server ended it. */
class WatchStream {
  readonly frames: Frame[] = [];
  ended = false;
  private readonly controller = new AbortController();
  status = 0;

  static async open(url: string, headers: Record<string, string> = {}): Promise<WatchStream> {
    const sut = new WatchStream();
    const response = await fetch(url, { headers, signal: sut.controller.signal });
    sut.status = response.status;
    void sut.read(response);
    return sut;
  }

  private async read(response: Response): Promise<void> {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let newline: number;
        while ((newline = buffer.indexOf('\n')) >= 0) {
          const line = buffer.slice(0, newline);
          buffer = buffer.slice(newline + 1);
          if (line.trim()) this.frames.push(JSON.parse(line) as Frame);
        }
      }
    } catch {
      // aborted by close()
    }
    this.ended = true;
  }

  /** Waits for a frame after the first `from` frames that passes `predicate`. */
  async next(what: string, predicate: (f: Frame) => boolean, from = 0): Promise<Frame> {
    return waitFor(`a watch frame: ${what} (seen: ${this.summary()})`, () => this.frames.slice(from).find(predicate), 20_000);
  }

  summary(): string {
    return this.frames.map((f) => `${f.type}:${f.object.metadata?.name ?? f.object.reason ?? ''}`).join(' ');
  }

  close(): void {
    this.controller.abort();
  }
}

interface Status {
  kind: string;
  reason: string;
  code: number;
  message: string;
  details?: { kind?: string; causes?: Array<{ field: string; reason: string; message: string }> };
}

interface List<T> {
  kind: string;
  metadata: { resourceVersion: string };
  items: T[];
}

const pod = (name: string, labels: Record<string, string>, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, labels },
  spec: { containers: [{ name: 'main', image: 'jetlet/busybox:1.35', command: ['sleep', '60'] }], ...extra },
});

const names = (list: List<Pod>): string[] => list.items.map((p) => p.metadata.name).sort();

/** Reading the API as Kubernetes clients do: selectors, with no node at all (pods stay Pending). */
describe('the API for readers', () => {
  let sut: Cluster;

  before(async () => {
    sut = await Cluster.start({ WATCH_CACHE_SIZE: '60', WATCH_BOOKMARK_SECONDS: '1' });
    // Namespaces are objects in Kubernetes: make sure "other" exists where the API has them.
    await sut.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'other' } });
    await sut.createPod('default', pod('web-1', { app: 'web', tier: 'front' }));
    await sut.createPod('default', pod('web-2', { app: 'web', tier: 'back' }, { restartPolicy: 'Never' }));
    await sut.createPod('default', pod('db-1', { app: 'db' }));
    await sut.createPod('other', pod('web-3', { app: 'web' }));
  });

  after(async () => {
    await sut?.stop();
  });

  it('keeps an idle connection open 90 s, as kube-apiserver, and says so', async () => {
    const { port } = new URL(sut.apiUrl);
    const agent = new HttpAgent({ keepAlive: true });
    const headers = await new Promise<IncomingHttpHeaders>((resolve, reject) => {
      const req = httpGet({ host: '127.0.0.1', port, path: '/api/v1/namespaces', agent }, (res) => {
        res.resume();
        resolve(res.headers);
      });
      req.once('error', reject);
    });
    agent.destroy();
    assert.equal(headers.connection, 'keep-alive');
    assert.equal(headers['keep-alive'], 'timeout=90');
  });

  it('lists only the pods a label selector chooses, equality- and set-based', async () => {
    const get = async (q: string): Promise<string[]> => names((await sut.request<List<Pod>>('GET', `/api/v1/namespaces/default/pods?${q}`)).body);
    assert.deepEqual(await get('labelSelector=app%3Dweb'), ['web-1', 'web-2']);
    assert.deepEqual(await get('labelSelector=app!%3Dweb'), ['db-1']);
    assert.deepEqual(await get(`labelSelector=${encodeURIComponent('app in (web,db),tier notin (back)')}`), ['db-1', 'web-1']);
    assert.deepEqual(await get('labelSelector=tier'), ['web-1', 'web-2']);
    assert.deepEqual(await get('labelSelector=!tier'), ['db-1']);
    assert.deepEqual(await get('labelSelector=app%3Dnone'), []);
    const all = await sut.request<List<Pod>>('GET', `/api/v1/pods?labelSelector=app%3Dweb`);
    assert.deepEqual(names(all.body), ['web-1', 'web-2', 'web-3']);
  });

  it('lists only the pods a field selector chooses', async () => {
    const get = async (q: string): Promise<string[]> =>
      names((await sut.request<List<Pod>>('GET', `/api/v1/pods?fieldSelector=${encodeURIComponent(q)}`)).body);
    assert.deepEqual(await get('metadata.name=web-1'), ['web-1']);
    assert.deepEqual(await get('metadata.namespace=other'), ['web-3']);
    assert.deepEqual(await get('spec.restartPolicy=Never'), ['web-2']);
    assert.deepEqual(await get('status.phase=Pending,metadata.namespace!=other'), ['db-1', 'web-1', 'web-2']);
    assert.deepEqual(await get('spec.nodeName='), ['db-1', 'web-1', 'web-2', 'web-3']);
    assert.deepEqual(await get('spec.schedulerName=default-scheduler,metadata.name=db-1'), ['db-1']);
    assert.deepEqual(await get('status.podIP=10.0.0.1'), []);
  });

  it('answers a bad selector with 400 BadRequest and the parser message, as Kubernetes', async () => {
    const cases: Array<[string, RegExp]> = [
      ['labelSelector=app%20in%20web', /^unable to parse requirement: found 'web' expected: '\('$/],
      ['labelSelector=-x%3Dy', /unable to parse requirement: key: Invalid value: "-x"/],
      ['fieldSelector=spec.foo%3Dbar', /^field label not supported: spec.foo$/],
      ['fieldSelector=metadata.name', /^invalid selector: 'metadata.name'; can't understand 'metadata.name'$/],
    ];
    for (const [query, message] of cases) {
      const { status, body } = await sut.request<Status>('GET', `/api/v1/namespaces/default/pods?${query}`);
      assert.equal(status, 400, query);
      assert.equal(body.kind, 'Status');
      assert.equal(body.reason, 'BadRequest');
      assert.match(body.message, message);
    }
    const nodes = await sut.request<Status>('GET', '/api/v1/nodes?fieldSelector=status.phase%3DReady');
    assert.equal(nodes.status, 400);
    assert.equal(nodes.body.message, 'field label not supported: status.phase');
    const events = await sut.request<Status>('GET', '/api/v1/events?fieldSelector=involvedObject.color%3Dred');
    assert.equal(events.status, 400);
    assert.equal(events.body.message, 'field label not supported: involvedObject.color');
  });

  it('filters events by involvedObject, reason, type and source, and nodes by name', async () => {
    const events = await sut.request<List<unknown>>('GET', '/api/v1/events?fieldSelector=type%3DWarning,source%3Djetlet,involvedObject.kind%3DPod');
    assert.equal(events.status, 200);
    assert.equal(events.body.kind, 'EventList');
    const nodes = await sut.request<List<unknown>>('GET', '/api/v1/nodes?fieldSelector=metadata.name%3Dnone,spec.unschedulable%3Dfalse&labelSelector=a%3Db');
    assert.equal(nodes.status, 200);
    assert.deepEqual(nodes.body.items, []);
  });

  it('writes nothing on dryRun=All, yet validates, defaults and answers as if it wrote', async () => {
    const before = (await sut.request<List<Pod>>('GET', '/api/v1/pods')).body;
    const created = await sut.request<Pod>('POST', '/api/v1/namespaces/default/pods?dryRun=All', pod('dry', { app: 'dry' }));
    assert.equal(created.status, 201);
    assert.equal(created.body.metadata.name, 'dry');
    assert.match(created.body.metadata.uid ?? '', /^[0-9a-f-]{36}$/);
    assert.equal(created.body.spec.restartPolicy, 'Always');
    assert.equal(created.body.metadata.resourceVersion, undefined);
    const invalid = await sut.request<Status>('POST', '/api/v1/namespaces/default/pods?dryRun=All', { metadata: { name: 'dry' }, spec: {} });
    assert.equal(invalid.status, 422);
    const exists = await sut.request<Status>('POST', '/api/v1/namespaces/default/pods?dryRun=All', pod('web-1', {}));
    assert.equal(exists.status, 409);

    const patched = await sut.request<Pod>(
      'PATCH',
      '/api/v1/namespaces/default/pods/web-1?dryRun=All',
      { metadata: { labels: { extra: 'yes' } } },
      'application/merge-patch+json',
    );
    assert.equal(patched.status, 200);
    assert.equal(patched.body.metadata.labels?.extra, 'yes');
    const current = (await sut.getPod('default', 'web-1')) as Pod;
    const replaced = await sut.request<Pod>('PUT', '/api/v1/namespaces/default/pods/web-1?dryRun=All', {
      ...current,
      metadata: { ...current.metadata, labels: { app: 'changed' } },
    });
    assert.equal(replaced.status, 200);
    assert.equal(replaced.body.metadata.labels?.app, 'changed');
    const deleted = await sut.request<Pod>('DELETE', '/api/v1/namespaces/default/pods/web-1?dryRun=All');
    assert.equal(deleted.status, 200);
    assert.ok(deleted.body.metadata.deletionTimestamp);
    const evicted = await sut.request<Status>('POST', '/api/v1/namespaces/default/pods/web-1/eviction', {
      apiVersion: 'policy/v1',
      kind: 'Eviction',
      metadata: { name: 'web-1', namespace: 'default' },
      deleteOptions: { dryRun: ['All'] },
    });
    assert.equal(evicted.status, 201);
    // kubectl puts it in the DeleteOptions body.
    const deletedByBody = await sut.request<Pod>('DELETE', '/api/v1/namespaces/default/pods/web-2', {
      kind: 'DeleteOptions',
      apiVersion: 'v1',
      dryRun: ['All'],
    });
    assert.equal(deletedByBody.status, 200);

    const afterwards = (await sut.request<List<Pod>>('GET', '/api/v1/pods')).body;
    assert.equal(afterwards.metadata.resourceVersion, before.metadata.resourceVersion, 'nothing was appended to the pods stream');
    assert.deepEqual(names(afterwards), names(before));
    const web1 = (await sut.getPod('default', 'web-1')) as Pod;
    assert.equal(web1.metadata.labels?.extra, undefined);
    assert.equal(web1.metadata.labels?.app, 'web');
    assert.equal(web1.metadata.deletionTimestamp, undefined);
    assert.equal((await sut.getPod('default', 'web-2'))?.metadata.deletionTimestamp, undefined);
  });

  it('answers an unknown dryRun value as Kubernetes: 422 on the verb options', async () => {
    const create = await sut.request<Status>('POST', '/api/v1/namespaces/default/pods?dryRun=Yes', pod('nope', {}));
    assert.equal(create.status, 422);
    assert.equal(create.body.message, 'CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"Yes"}: supported values: "All"');
    assert.equal(create.body.details?.causes?.[0]?.field, 'dryRun');
    const del = await sut.request<Status>('DELETE', '/api/v1/namespaces/default/pods/web-1?dryRun=maybe');
    assert.equal(del.status, 422);
    assert.match(del.body.message, /^DeleteOptions.meta.k8s.io/);
    assert.equal(await sut.getPod('default', 'nope'), undefined);
    assert.equal((await sut.getPod('default', 'web-1'))?.metadata.deletionTimestamp, undefined);
  });

  it('answers a PUT or PATCH carrying a stale resourceVersion with 409 Conflict', async () => {
    const current = (await sut.getPod('default', 'db-1')) as Pod;
    const stale = String(Number(current.metadata.resourceVersion) - 1);
    const expected =
      'Operation cannot be fulfilled on pods "db-1": the object has been modified; please apply your changes to the latest version and try again';
    const patch = await sut.request<Status>(
      'PATCH',
      '/api/v1/namespaces/default/pods/db-1',
      { metadata: { resourceVersion: stale, labels: { x: 'y' } } },
      'application/strategic-merge-patch+json',
    );
    assert.equal(patch.status, 409);
    assert.equal(patch.body.reason, 'Conflict');
    assert.equal(patch.body.message, expected);
    const put = await sut.request<Status>('PUT', '/api/v1/namespaces/default/pods/db-1', {
      ...current,
      metadata: { ...current.metadata, resourceVersion: stale },
    });
    assert.equal(put.status, 409);
    assert.equal(put.body.message, expected);
    assert.equal((await sut.getPod('default', 'db-1'))?.metadata.labels?.x, undefined);
    const fresh = await sut.request<Pod>(
      'PATCH',
      '/api/v1/namespaces/default/pods/db-1',
      { metadata: { resourceVersion: current.metadata.resourceVersion, labels: { x: 'y' } } },
      'application/merge-patch+json',
    );
    assert.equal(fresh.status, 200);
    assert.equal(fresh.body.metadata.labels?.x, 'y');
  });

  it('watches from a list resourceVersion: ADDED, MODIFIED, DELETED, each with a newer resourceVersion', async () => {
    const list = (await sut.request<List<Pod>>('GET', '/api/v1/namespaces/default/pods')).body;
    const watch = await WatchStream.open(`${sut.apiUrl}/api/v1/namespaces/default/pods?watch=true&resourceVersion=${list.metadata.resourceVersion}`);
    try {
      assert.equal(watch.status, 200);
      await sut.createPod('default', pod('watched', { app: 'watched' }));
      await sut.request('PATCH', '/api/v1/namespaces/default/pods/watched', { metadata: { labels: { step: '2' } } }, 'application/merge-patch+json');
      await sut.request('DELETE', '/api/v1/namespaces/default/pods/watched');
      await watch.next('DELETED watched', (f) => f.type === 'DELETED' && f.object.metadata.name === 'watched');
      const mine = watch.frames.filter((f) => f.object.metadata.name === 'watched');
      assert.deepEqual(
        mine.map((f) => f.type).filter((t, i, all) => t !== all[i - 1]),
        ['ADDED', 'MODIFIED', 'DELETED'],
      );
      assert.equal(watch.frames[0]?.object.metadata.name, 'watched', 'nothing from before the resourceVersion is replayed');
      const versions = mine.map((f) => Number(f.object.metadata.resourceVersion));
      assert.deepEqual(
        versions,
        [...versions].sort((a, b) => a - b),
      );
      assert.ok(Number(versions.at(-1)) > Number(list.metadata.resourceVersion));
      assert.equal(mine.find((f) => f.type === 'MODIFIED')?.object.metadata.labels?.step, '2');
    } finally {
      watch.close();
    }
  });

  it('replays exactly what happened after a resourceVersion, and sends initial ADDED events without one', async () => {
    const before = (await sut.request<List<Pod>>('GET', '/api/v1/pods')).body.metadata.resourceVersion;
    await sut.createPod('default', pod('late', { app: 'late' }));
    const replay = await WatchStream.open(`${sut.apiUrl}/api/v1/watch/namespaces/default/pods?resourceVersion=${before}`);
    const initial = await WatchStream.open(`${sut.apiUrl}/api/v1/watch/pods?labelSelector=app%3Dweb`);
    try {
      await replay.next('ADDED late', (f) => f.type === 'ADDED' && f.object.metadata.name === 'late');
      assert.deepEqual(
        replay.frames.map((f) => f.object.metadata.name),
        ['late'],
      );
      await initial.next('ADDED web-3', (f) => f.object.metadata.name === 'web-3');
      assert.deepEqual(initial.frames.map((f) => `${f.type}:${f.object.metadata.name}`).sort(), ['ADDED:web-1', 'ADDED:web-2', 'ADDED:web-3']);
    } finally {
      replay.close();
      initial.close();
    }
  });

  it('sends DELETED when an object stops matching the selector and ADDED when it matches again', async () => {
    const watch = await WatchStream.open(`${sut.apiUrl}/api/v1/namespaces/default/pods?watch=1&labelSelector=app%3Dflip&resourceVersion=0`);
    try {
      await sut.createPod('default', pod('flip', { app: 'flip' }));
      await watch.next('ADDED flip', (f) => f.type === 'ADDED');
      await sut.request('PATCH', '/api/v1/namespaces/default/pods/flip', { metadata: { labels: { app: 'flop' } } }, 'application/merge-patch+json');
      const gone = await watch.next('DELETED flip', (f) => f.type === 'DELETED');
      assert.equal(gone.object.metadata.labels?.app, 'flop');
      await sut.request('PATCH', '/api/v1/namespaces/default/pods/flip', { metadata: { labels: { app: 'flip' } } }, 'application/merge-patch+json');
      await watch.next('ADDED flip again', (f) => f.type === 'ADDED', 2);
      assert.deepEqual(
        watch.frames.map((f) => f.type),
        ['ADDED', 'DELETED', 'ADDED'],
      );
    } finally {
      watch.close();
    }
  });

  it('sends bookmarks, honours sendInitialEvents and timeoutSeconds, and rejects contradictory options', async () => {
    const streaming = await WatchStream.open(
      `${sut.apiUrl}/api/v1/pods?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&fieldSelector=metadata.name%3Ddb-1`,
    );
    try {
      const end = await streaming.next('the initial-events-end bookmark', (f) => f.type === 'BOOKMARK');
      assert.equal(end.object.metadata.annotations?.['k8s.io/initial-events-end'], 'true');
      assert.deepEqual(
        streaming.frames.slice(0, 1).map((f) => `${f.type}:${f.object.metadata.name}`),
        ['ADDED:db-1'],
      );
      await streaming.next('a periodic bookmark', (f) => f.type === 'BOOKMARK' && f.object.metadata.annotations === undefined);
    } finally {
      streaming.close();
    }
    const short = await WatchStream.open(`${sut.apiUrl}/api/v1/nodes?watch=true&timeoutSeconds=1`);
    await waitFor('the watch to end at its timeout', () => short.ended, 20_000);
    const invalid = await sut.request<Status>('GET', '/api/v1/pods?watch=true&sendInitialEvents=true');
    assert.equal(invalid.status, 422);
    assert.match(
      invalid.body.message,
      /^ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan/,
    );
    const badSelector = await sut.request<Status>('GET', '/api/v1/watch/pods?fieldSelector=spec.color%3Dred');
    assert.equal(badSelector.status, 400);
    assert.equal(badSelector.body.message, 'field label not supported: spec.color');
    const unknown = await sut.request<Status>('GET', '/api/v1/watch/widgets');
    assert.equal(unknown.status, 404);
  });

  it('ends a watch from a resourceVersion that left the window with 410 Expired, and one from the future with a timeout', async () => {
    for (let i = 0; i < 35; i++) {
      await sut.createPod('default', pod(`churn-${i}`, { app: 'churn' }));
      await sut.request('DELETE', `/api/v1/namespaces/default/pods/churn-${i}`);
    }
    const expired = await WatchStream.open(`${sut.apiUrl}/api/v1/pods?watch=true&resourceVersion=1`);
    const frame = await expired.next('ERROR', (f) => f.type === 'ERROR');
    assert.equal(frame.object.code, 410);
    assert.equal(frame.object.reason, 'Expired');
    assert.match(frame.object.message ?? '', /^too old resource version: 1 \(\d+\)$/);
    await waitFor('the expired watch to end', () => expired.ended, 20_000);
    const future = await WatchStream.open(`${sut.apiUrl}/api/v1/pods?watch=true&resourceVersion=99999999`);
    const tooLarge = await future.next('ERROR', (f) => f.type === 'ERROR');
    assert.equal(tooLarge.object.code, 504);
    assert.match(tooLarge.object.message ?? '', /^Too large resource version: 99999999, current: \d+$/);
  });

  it('prints Tables and PartialObjectMetadata when the Accept header asks, on lists, objects and watches', async () => {
    const table = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';
    const list = await fetch(`${sut.apiUrl}/api/v1/namespaces/default/pods?labelSelector=app%3Dweb`, { headers: { accept: table } });
    const body = (await list.json()) as {
      kind: string;
      columnDefinitions: Array<{ name: string; priority: number }>;
      rows: Array<{ cells: unknown[]; object: { kind: string; metadata: { name: string } } }>;
    };
    assert.equal(body.kind, 'Table');
    assert.deepEqual(
      body.columnDefinitions.map((c) => c.name),
      ['Name', 'Ready', 'Status', 'Restarts', 'Age', 'IP', 'Node', 'Nominated Node', 'Readiness Gates'],
    );
    assert.deepEqual(
      body.rows.map((r) => r.cells.slice(0, 3)),
      [
        ['web-1', '0/1', 'Pending'],
        ['web-2', '0/1', 'Pending'],
      ],
    );
    assert.equal(body.rows[0]?.object.kind, 'PartialObjectMetadata');
    const one = (await (await fetch(`${sut.apiUrl}/api/v1/namespaces/default/pods/web-1`, { headers: { accept: table } })).json()) as {
      kind: string;
      rows: unknown[];
    };
    assert.equal(one.kind, 'Table');
    assert.equal(one.rows.length, 1);
    const partial = (await (
      await fetch(`${sut.apiUrl}/api/v1/namespaces/default/pods`, { headers: { accept: 'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io' } })
    ).json()) as { kind: string; items: Array<{ kind: string; metadata: { name: string }; spec?: unknown }> };
    assert.equal(partial.kind, 'PartialObjectMetadataList');
    assert.ok(partial.items.every((i) => i.kind === 'PartialObjectMetadata' && i.spec === undefined));
    const nodes = (await (await fetch(`${sut.apiUrl}/api/v1/nodes`, { headers: { accept: table } })).json()) as { columnDefinitions: Array<{ name: string }> };
    assert.deepEqual(
      nodes.columnDefinitions.map((c) => c.name),
      ['Name', 'Status', 'Roles', 'Age', 'Version', 'Internal-IP', 'External-IP', 'OS-Image', 'Kernel-Version', 'Container-Runtime'],
    );
    const watch = await WatchStream.open(`${sut.apiUrl}/api/v1/namespaces/default/pods?watch=true&fieldSelector=metadata.name%3Dweb-1`, { accept: table });
    try {
      const frame = await watch.next('a Table frame', (f) => f.type === 'ADDED');
      assert.equal(frame.object.kind, 'Table');
      assert.equal(frame.object.rows?.[0]?.cells[0], 'web-1');
    } finally {
      watch.close();
    }
  });
});
