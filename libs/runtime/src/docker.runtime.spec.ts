import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough, Readable } from 'node:stream';
import Docker from 'dockerode';
import { RuntimeError } from './runtime.errors.js';
import {
  DockerRuntime,
  demuxLogFrames,
  parseEventLine,
  splitLines,
  toIsoTime,
  toLabelFilters,
  toRuntimeContainer,
  toRuntimeState,
  type DockerContainerJson,
} from './docker.runtime.js';

const ZERO_TIME = '0001-01-01T00:00:00Z';

/** Trimmed from a real Docker 20.10 inspect answer of a running pause container. */
function runningSandboxJson(): DockerContainerJson {
  return {
    Id: 'a1b2c3d4e5f6a1b2c3d4e5f6a1b2c3d4e5f6a1b2c3d4e5f6a1b2c3d4e5f6a1b2',
    Name: '/k8s_POD_web-0_default_uid-1_0',
    Created: '2024-05-01T10:00:00.123456789Z',
    Image: 'sha256:261de21ca8bdeffc6454f3ff65dc38fd49045aa531a0c2466dd628e425441322',
    State: {
      Status: 'running',
      ExitCode: 0,
      OOMKilled: false,
      Error: '',
      StartedAt: '2024-05-01T10:00:01.5Z',
      FinishedAt: ZERO_TIME,
    },
    Config: {
      Image: 'jetlet/pause:1.0',
      Labels: { 'io.jetlet.kind': 'sandbox', 'io.jetlet.pod.name': 'web-0' },
      Tty: false,
    },
    NetworkSettings: {
      IPAddress: '172.17.0.5',
      Networks: { bridge: { IPAddress: '172.17.0.5' } },
    },
  };
}

describe('toRuntimeContainer', () => {
  it('maps a running sandbox with its IP and without finish time or exit code', () => {
    const sut = toRuntimeContainer(runningSandboxJson());
    assert.deepEqual(sut, {
      id: 'a1b2c3d4e5f6a1b2c3d4e5f6a1b2c3d4e5f6a1b2c3d4e5f6a1b2c3d4e5f6a1b2',
      name: 'k8s_POD_web-0_default_uid-1_0',
      image: 'jetlet/pause:1.0',
      imageId: 'sha256:261de21ca8bdeffc6454f3ff65dc38fd49045aa531a0c2466dd628e425441322',
      labels: { 'io.jetlet.kind': 'sandbox', 'io.jetlet.pod.name': 'web-0' },
      state: 'running',
      createdAt: '2024-05-01T10:00:00.123Z',
      startedAt: '2024-05-01T10:00:01.500Z',
      oomKilled: false,
      ip: '172.17.0.5',
    });
  });

  it('falls back to the bridge network address when the top-level one is empty', () => {
    const json = runningSandboxJson();
    json.NetworkSettings = { IPAddress: '', Networks: { bridge: { IPAddress: '172.17.0.9' } } };
    assert.equal(toRuntimeContainer(json).ip, '172.17.0.9');
  });

  it('leaves ip undefined for a container sharing another network namespace', () => {
    const json = runningSandboxJson();
    json.NetworkSettings = { IPAddress: '', Networks: {} };
    assert.equal(toRuntimeContainer(json).ip, undefined);
  });

  it('names the container whose network namespace an app container joined', () => {
    const json = { ...runningSandboxJson(), HostConfig: { NetworkMode: 'container:f00dfeed' } };
    assert.equal(toRuntimeContainer(json).networkOf, 'f00dfeed');
    assert.equal(toRuntimeContainer({ ...json, HostConfig: { NetworkMode: 'bridge' } }).networkOf, undefined);
  });

  it('maps an exited, OOM-killed container with exit code and finish time', () => {
    const json = runningSandboxJson();
    json.State = {
      Status: 'exited',
      ExitCode: 137,
      OOMKilled: true,
      Error: '',
      StartedAt: '2024-05-01T10:00:01Z',
      FinishedAt: '2024-05-01T10:05:00.000000001Z',
    };
    const sut = toRuntimeContainer(json);
    assert.equal(sut.state, 'exited');
    assert.equal(sut.exitCode, 137);
    assert.equal(sut.oomKilled, true);
    assert.equal(sut.finishedAt, '2024-05-01T10:05:00.000Z');
    assert.equal(sut.error, undefined);
  });

  it('reports exit code 0 for a cleanly exited container', () => {
    const json = runningSandboxJson();
    json.State = { ...json.State, Status: 'exited', ExitCode: 0, FinishedAt: '2024-05-01T10:05:00Z' };
    assert.equal(toRuntimeContainer(json).exitCode, 0);
  });

  it('maps a created container that failed to start with its error and exit code', () => {
    const json = runningSandboxJson();
    json.State = {
      Status: 'created',
      ExitCode: 127,
      OOMKilled: false,
      Error: 'OCI runtime create failed: exec: "/nope": stat /nope: no such file or directory: unknown',
      StartedAt: ZERO_TIME,
      FinishedAt: ZERO_TIME,
    };
    const sut = toRuntimeContainer(json);
    assert.equal(sut.state, 'created');
    assert.equal(sut.exitCode, 127);
    assert.match(sut.error ?? '', /no such file or directory/);
    assert.equal(sut.startedAt, undefined);
    assert.equal(sut.finishedAt, undefined);
  });

  it('leaves exit code undefined for a never-started container', () => {
    const json = runningSandboxJson();
    json.State = { Status: 'created', ExitCode: 0, StartedAt: ZERO_TIME, FinishedAt: ZERO_TIME };
    assert.equal(toRuntimeContainer(json).exitCode, undefined);
  });

  it('tolerates the nulls Docker sends for labels and networks', () => {
    const json = runningSandboxJson();
    json.Config = { Image: 'jetlet/busybox:1.35', Labels: null };
    json.NetworkSettings = { IPAddress: null, Networks: null };
    const sut = toRuntimeContainer(json);
    assert.deepEqual(sut.labels, {});
    assert.equal(sut.ip, undefined);
  });

  it('does not share the labels object with the input', () => {
    const json = runningSandboxJson();
    const sut = toRuntimeContainer(json);
    sut.labels['x'] = 'y';
    assert.equal(json.Config?.Labels?.['x'], undefined);
  });
});

describe('toRuntimeState', () => {
  for (const [status, expected] of [
    ['created', 'created'],
    ['running', 'running'],
    ['paused', 'running'],
    ['restarting', 'exited'],
    ['removing', 'exited'],
    ['exited', 'exited'],
    ['dead', 'exited'],
    ['something-new', 'unknown'],
  ] as const) {
    it(`maps ${status} to ${expected}`, () => {
      assert.equal(toRuntimeState(status), expected);
    });
  }
});

describe('toIsoTime', () => {
  it('maps Go zero time and empty values to undefined', () => {
    assert.equal(toIsoTime(ZERO_TIME), undefined);
    assert.equal(toIsoTime(''), undefined);
    assert.equal(toIsoTime(null), undefined);
    assert.equal(toIsoTime(undefined), undefined);
    assert.equal(toIsoTime('not a time'), undefined);
  });

  it('normalises nanosecond and offset times to fixed-width UTC ISO', () => {
    assert.equal(toIsoTime('2024-05-01T10:00:00.987654321Z'), '2024-05-01T10:00:00.987Z');
    assert.equal(toIsoTime('2024-05-01T12:00:00+02:00'), '2024-05-01T10:00:00.000Z');
  });
});

describe('toLabelFilters', () => {
  it('renders k=v pairs', () => {
    assert.deepEqual(toLabelFilters({ 'io.jetlet.node': 'n1', 'io.jetlet.kind': 'sandbox' }), ['io.jetlet.node=n1', 'io.jetlet.kind=sandbox']);
    assert.deepEqual(toLabelFilters({}), []);
  });
});

describe('parseEventLine', () => {
  const die = {
    status: 'die',
    id: 'c0ffee',
    from: 'jetlet/busybox:1.35',
    Type: 'container',
    Action: 'die',
    Actor: {
      ID: 'c0ffee',
      Attributes: {
        exitCode: '3',
        image: 'jetlet/busybox:1.35',
        name: 'app',
        'io.jetlet.node': 'n1',
        'io.jetlet.kind': 'container',
      },
    },
    scope: 'local',
    time: 1714557600,
    timeNano: 1714557600123456000,
  };

  it('parses a die event with exit code, labels and millisecond time', () => {
    assert.deepEqual(parseEventLine(JSON.stringify(die)), {
      containerId: 'c0ffee',
      action: 'die',
      labels: { 'io.jetlet.node': 'n1', 'io.jetlet.kind': 'container' },
      exitCode: 3,
      timeMs: 1714557600123,
      id: 'c0ffee.die.1714557600123456000',
    });
  });

  it('marks an event the same each time the engine sends it, and apart from any other', () => {
    const again = parseEventLine(JSON.stringify(die));
    assert.equal(again?.id, parseEventLine(JSON.stringify(die))?.id);
    const later = parseEventLine(JSON.stringify({ ...die, timeNano: die.timeNano + 1000 }));
    const start = parseEventLine(JSON.stringify({ ...die, Action: 'start' }));
    const other = parseEventLine(JSON.stringify({ ...die, Actor: { ...die.Actor, ID: 'beef' } }));
    assert.equal(new Set([again?.id, later?.id, start?.id, other?.id]).size, 4);
    const { timeNano: _nano, time: _time, ...timeless } = die;
    assert.equal(parseEventLine(JSON.stringify(timeless))?.id, undefined);
  });

  it('strips the detail after the colon and ignores exec exit codes', () => {
    const event = parseEventLine(
      JSON.stringify({
        ...die,
        Action: 'exec_die',
        Actor: { ID: 'c0ffee', Attributes: { execID: 'e1', exitCode: '1', 'io.jetlet.node': 'n1' } },
      }),
    );
    assert.equal(event?.action, 'exec_die');
    assert.equal(event?.exitCode, undefined);
    assert.deepEqual(event?.labels, { 'io.jetlet.node': 'n1' });

    const start = parseEventLine(JSON.stringify({ ...die, Action: 'exec_start: sh -c echo hi' }));
    assert.equal(start?.action, 'exec_start');
    const health = parseEventLine(JSON.stringify({ ...die, Action: 'health_status: unhealthy' }));
    assert.equal(health?.action, 'health_status');
  });

  it('falls back to seconds when timeNano is missing', () => {
    const withoutNano: Record<string, unknown> = { ...die };
    delete withoutNano['timeNano'];
    assert.equal(parseEventLine(JSON.stringify(withoutNano))?.timeMs, 1714557600000);
  });

  it('drops non-container events and garbage instead of throwing', () => {
    assert.equal(parseEventLine(JSON.stringify({ ...die, Type: 'network' })), undefined);
    assert.equal(parseEventLine('{"Type":"container"'), undefined);
    assert.equal(parseEventLine('42'), undefined);
    assert.equal(parseEventLine('null'), undefined);
    assert.equal(parseEventLine(JSON.stringify({ Type: 'container', Action: 'start' })), undefined);
  });

  it('has no exit code when the attribute is absent or not a number', () => {
    const noCode = { ...die, Actor: { ID: 'c0ffee', Attributes: { exitCode: 'x' } } };
    assert.equal(parseEventLine(JSON.stringify(noCode))?.exitCode, undefined);
    const start = { ...die, Action: 'start', status: 'start' };
    assert.equal(parseEventLine(JSON.stringify(start))?.exitCode, undefined);
  });
});

async function collect(chunks: Array<Buffer | string>): Promise<string[]> {
  async function* source(): AsyncGenerator<Buffer | string> {
    for (const chunk of chunks) yield chunk;
  }
  const lines: string[] = [];
  for await (const line of splitLines(source())) lines.push(line);
  return lines;
}

describe('splitLines', () => {
  it('joins lines split across chunks and splits merged ones', async () => {
    assert.deepEqual(await collect(['{"a":', '1}\n{"b":2}\n{"c"', ':3}\n']), ['{"a":1}', '{"b":2}', '{"c":3}']);
  });

  it('skips blank and CRLF remnants and yields a final unterminated line', async () => {
    assert.deepEqual(await collect(['one\r\n\n\n', 'two']), ['one', 'two']);
  });

  it('keeps a multi-byte character that is cut between chunks intact', async () => {
    const bytes = Buffer.from('{"n":"ü"}\n', 'utf8');
    const cut = bytes.indexOf(0xbc); // second byte of ü
    assert.deepEqual(await collect([bytes.subarray(0, cut), bytes.subarray(cut)]), ['{"n":"ü"}']);
  });
});

function frame(stream: 1 | 2, text: string): Buffer {
  const payload = Buffer.from(text, 'utf8');
  const header = Buffer.alloc(8);
  header.writeUInt8(stream, 0);
  header.writeUInt32BE(payload.length, 4);
  return Buffer.concat([header, payload]);
}

describe('demuxLogFrames', () => {
  it('concatenates stdout and stderr payloads in order', () => {
    const data = Buffer.concat([frame(1, 'hi\n'), frame(2, 'oops\n'), frame(1, 'bye\n')]);
    assert.equal(demuxLogFrames(data), 'hi\noops\nbye\n');
  });

  it('returns an empty string for no output and keeps a truncated last frame', () => {
    assert.equal(demuxLogFrames(Buffer.alloc(0)), '');
    const data = frame(1, 'partial line');
    assert.equal(demuxLogFrames(data.subarray(0, data.length - 5)), 'partial');
  });
});

/** Lets the event loop turn until `condition` holds (at most 10,000 turns). */
async function waitUntil(condition: () => boolean): Promise<void> {
  for (let turn = 0; !condition(); turn++) {
    if (turn >= 10_000) throw new Error('condition never held');
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** An engine error as dockerode shapes it. */
function httpError(statusCode: number, message: string): Error {
  return Object.assign(new Error(`(HTTP code ${statusCode}) - ${message}`), { statusCode });
}

/**
 * A dockerode stand-in with only the methods a test needs. It inherits from Docker's
 * prototype so the adapter takes it as a client (not as connection options); having no
 * modem of its own unless given one, anything not faked fails instead of reaching an engine.
 */
function fakeDocker(parts: Record<string, unknown>): Docker {
  return Object.assign(Object.create(Docker.prototype) as Docker, parts);
}

describe('DockerRuntime with a fake engine client', () => {
  it('yields events split across chunks and throws when the stream ends on its own', async () => {
    const stream = new PassThrough();
    const sut = new DockerRuntime(fakeDocker({ getEvents: async () => stream }));
    const line = (id: string, action: string): string =>
      JSON.stringify({ Type: 'container', Action: action, Actor: { ID: id, Attributes: {} }, timeNano: 1e15 }) + '\n';
    const both = line('a', 'start') + line('a', 'die');
    stream.write(both.slice(0, 10));
    stream.write(both.slice(10, 80));
    stream.end(both.slice(80));

    const seen: string[] = [];
    await assert.rejects(
      (async () => {
        for await (const event of sut.events({}, new AbortController().signal)) seen.push(event.action);
      })(),
      (err: unknown) => err instanceof RuntimeError && /ended unexpectedly/.test(err.message),
    );
    assert.deepEqual(seen, ['start', 'die']);
  });

  it('ends quietly and destroys the stream when the signal aborts', async () => {
    const stream = new PassThrough();
    let filters: unknown;
    const sut = new DockerRuntime(
      fakeDocker({
        getEvents: async (opts: { filters: unknown }) => {
          filters = opts.filters;
          return stream;
        },
      }),
    );
    const controller = new AbortController();
    stream.write(JSON.stringify({ Type: 'container', Action: 'start', Actor: { ID: 'a' }, time: 1 }) + '\n');
    const seen: string[] = [];
    for await (const event of sut.events({ 'io.jetlet.node': 'n1' }, controller.signal)) {
      seen.push(event.action);
      controller.abort();
    }
    assert.deepEqual(seen, ['start']);
    assert.equal(stream.destroyed, true);
    assert.deepEqual(filters, { type: ['container'], label: ['io.jetlet.node=n1'] });
  });

  it('reports an OOM kill whose oom event came after the die, which the engine did not record', async () => {
    const json = runningSandboxJson();
    json.State = { Status: 'exited', ExitCode: 137, OOMKilled: false, Error: '', StartedAt: '2024-05-01T10:00:01Z', FinishedAt: '2024-05-01T10:00:02Z' };
    const id = json.Id;
    const stream = new PassThrough();
    const sut = new DockerRuntime(
      fakeDocker({
        getEvents: async () => stream,
        listContainers: async () => [{ Id: id, State: 'exited' }],
        getContainer: () => ({ inspect: async () => structuredClone(json) }),
      }),
    );
    const line = (action: string): string => JSON.stringify({ Type: 'container', Action: action, Actor: { ID: id, Attributes: {} }, timeNano: 1e15 }) + '\n';
    const controller = new AbortController();
    const seen: string[] = [];
    const watching = (async () => {
      for await (const event of sut.events({}, controller.signal)) {
        seen.push(event.action);
        if (event.action === 'oom') controller.abort();
      }
    })();

    stream.write(line('die'));
    await waitUntil(() => seen.length === 1);
    assert.equal((await sut.listContainers({}))[0]?.oomKilled, false, 'the engine says nothing of an OOM yet');
    stream.write(line('oom'));
    await watching;

    assert.equal((await sut.listContainers({}))[0]?.oomKilled, true);
    assert.equal((await sut.inspectContainer(id))?.oomKilled, true);
  });

  it('wraps a failing event stream so the caller can reconnect', async () => {
    const stream = new PassThrough();
    const sut = new DockerRuntime(fakeDocker({ getEvents: async () => stream }));
    setImmediate(() => stream.destroy(new Error('socket hang up')));
    await assert.rejects(
      (async () => {
        for await (const _event of sut.events({}, new AbortController().signal));
      })(),
      (err: unknown) => err instanceof RuntimeError && /watch events.*socket hang up/.test(err.message),
    );
  });

  it('asks a stream opened again for the events since a second before the last one delivered, and skips those it delivered', async () => {
    const streams = [new PassThrough(), new PassThrough(), new PassThrough(), new PassThrough()];
    // The engine's clock, in each answer's Date header.
    const dates = ['10:00:05', '10:00:06', '10:00:30', '10:00:31'];
    const asked: Array<number | undefined> = [];
    const sut = new DockerRuntime(
      fakeDocker({
        getEvents: async (opts: { since?: number }) => {
          asked.push(opts.since);
          const stream = streams[asked.length - 1] ?? new PassThrough();
          return Object.assign(stream, { headers: { date: `Wed, 01 May 2024 ${dates[asked.length - 1]} GMT` } });
        },
      }),
    );
    const line = (id: string, action: string, timeNano: number): string =>
      JSON.stringify({ Type: 'container', Action: action, Actor: { ID: id, Attributes: {} }, timeNano }) + '\n';
    const t = Date.parse('2024-05-01T10:00:10Z') * 1e6;
    const seen: string[] = [];
    const drain = async (): Promise<void> => {
      await assert.rejects(async () => {
        for await (const event of sut.events({ 'io.jetlet.node': 'n1' }, new AbortController().signal)) seen.push(`${event.containerId} ${event.action}`);
      }, /ended unexpectedly/);
    };

    // With no ping answer telling the engine's clock, the first stream asks for nothing before
    // it (this process's clock is not the engine's), and delivers nothing.
    streams[0]?.end();
    await drain();
    assert.equal(asked[0], undefined);

    // The next asks from a second before the first one's opening, by the engine's clock. Its events come out of order.
    streams[1]?.end(line('a', 'start', t) + line('a', 'die', t + 5_000) + line('b', 'start', t + 2_000));
    await drain();
    assert.equal(asked[1], Date.parse('2024-05-01T10:00:04Z') / 1000);

    // From a second before the last delivered: sent again, what was delivered, and one never delivered.
    streams[2]?.end(line('a', 'die', t + 5_000) + line('b', 'start', t + 2_000) + line('c', 'start', t + 1_000) + line('a', 'destroy', t + 9_000));
    await drain();
    assert.equal(asked[2], (t + 2_000 - 1e9) / 1e9);

    // A stream that delivers nothing leaves the point where it was: its opening is later than events it may not have read.
    streams[3]?.end();
    await drain();
    assert.equal(asked[3], (t + 9_000 - 1e9) / 1e9);
    assert.deepEqual(seen, ['a start', 'a die', 'b start', 'c start', 'a destroy']);
  });

  it("asks the first stream for the events since a second before the engine's clock at a ping just before it", async () => {
    const dialed: string[] = [];
    const asked: Array<number | undefined> = [];
    const stream = new PassThrough();
    const sut = new DockerRuntime(
      fakeDocker({
        modem: {
          dial: (opts: { path: string; method: string }, done: (err: unknown, result: unknown) => void) => {
            dialed.push(`${opts.method} ${opts.path}`);
            done(null, Object.assign(Readable.from(['OK']), { headers: { date: 'Wed, 01 May 2024 10:00:05 GMT' } }));
          },
        },
        getEvents: async (opts: { since?: number }) => {
          asked.push(opts.since);
          return Object.assign(stream, { headers: { date: 'Wed, 01 May 2024 10:00:06 GMT' } });
        },
      }),
    );
    // What happened while the stream was being opened comes on it, and the agent's restart before.
    const died = Date.parse('2024-05-01T10:00:05.500Z') * 1e6;
    stream.end(JSON.stringify({ Type: 'container', Action: 'die', Actor: { ID: 'a', Attributes: {} }, timeNano: died }) + '\n');
    const seen: string[] = [];
    await assert.rejects(async () => {
      for await (const event of sut.events({ 'io.jetlet.node': 'n1' }, new AbortController().signal)) seen.push(`${event.containerId} ${event.action}`);
    }, /ended unexpectedly/);
    assert.deepEqual(dialed, ['GET /_ping?']);
    assert.deepEqual(asked, [Date.parse('2024-05-01T10:00:04Z') / 1000]);
    assert.deepEqual(seen, ['a die']);
  });

  it('ends without opening a stream when the signal aborts while the ping that reads the clock hangs', async () => {
    let asked = 0;
    let dialed: () => void = () => undefined;
    const pinging = new Promise<void>((resolve) => (dialed = resolve));
    const sut = new DockerRuntime(
      fakeDocker({
        modem: {
          dial: (opts: { abortSignal: AbortSignal }, done: (err: unknown) => void) => {
            dialed();
            opts.abortSignal.addEventListener('abort', () => done(new Error('aborted')));
          },
        },
        getEvents: async () => {
          asked++;
          return new PassThrough();
        },
      }),
    );
    const controller = new AbortController();
    const seen: string[] = [];
    const following = (async () => {
      for await (const event of sut.events({ 'io.jetlet.node': 'n1' }, controller.signal)) seen.push(event.action);
    })();
    await pinging;
    controller.abort();
    await following;
    assert.equal(asked, 0);
    assert.deepEqual(seen, []);
  });

  it('rejects a pull whose progress stream reports an error', async () => {
    const progress = '{"status":"Pulling from jetlet/x","id":"1"}\n' + '{"errorDetail":{"message":"manifest unknown"},"error":"manifest unknown"}\n';
    const sut = new DockerRuntime(fakeDocker({ pull: async () => Readable.from([Buffer.from(progress)]), modem: new Docker().modem }));
    await assert.rejects(sut.pullImage('jetlet/x:1'), (err: unknown) => {
      assert.ok(err instanceof RuntimeError);
      assert.equal(err.message, 'docker pull image jetlet/x:1 failed: manifest unknown');
      return true;
    });
  });

  it('resolves a pull whose progress stream completes cleanly', async () => {
    const progress = '{"status":"Pulling"}\n{"status":"Status: Image is up to date for jetlet/x:1"}\n';
    const sut = new DockerRuntime(fakeDocker({ pull: async () => Readable.from([Buffer.from(progress)]), modem: new Docker().modem }));
    await sut.pullImage('jetlet/x:1');
  });

  it('reports the pull progress of the whole image as it moves', async () => {
    const progress = [
      { status: 'Pulling from jetlet/x', id: '1' },
      { status: 'Pulling fs layer', progressDetail: {}, id: 'aaa' },
      { status: 'Downloading', progressDetail: { current: 512, total: 1024 }, id: 'aaa' },
      { status: 'Downloading', progressDetail: { current: 512, total: 1024 }, id: 'aaa' },
      { status: 'Pull complete', progressDetail: {}, id: 'aaa' },
      { status: 'Status: Downloaded newer image for jetlet/x:1' },
    ]
      .map((m) => JSON.stringify(m))
      .join('\n');
    const sut = new DockerRuntime(fakeDocker({ pull: async () => Readable.from([Buffer.from(`${progress}\n`)]), modem: new Docker().modem }));
    const seen: string[] = [];
    await sut.pullImage('jetlet/x:1', (p) => seen.push(`${p.layersDone}/${p.layers} ${p.currentBytes}/${p.totalBytes}`));
    assert.deepEqual(seen, ['0/1 0/0', '0/1 512/1024', '1/1 1024/1024']);
  });

  it('treats 304 and 404 as done where the CRI is idempotent, and wraps everything else', async () => {
    const errors: Record<string, Error> = {
      start: httpError(304, 'container already started'),
      stop: httpError(404, 'No such container: x'),
      remove: httpError(409, 'removal of container x is already in progress'),
      inspect: httpError(404, 'No such container: x'),
    };
    const sut = new DockerRuntime(
      fakeDocker({
        getContainer: () => ({
          start: async () => Promise.reject(errors['start']),
          stop: async () => Promise.reject(errors['stop']),
          remove: async () => Promise.reject(errors['remove']),
          inspect: async () => Promise.reject(errors['inspect']),
        }),
      }),
    );
    await sut.startContainer('x');
    await sut.stopContainer('x', 5);
    await sut.removeContainer('x');
    assert.equal(await sut.inspectContainer('x'), undefined);

    errors['remove'] = httpError(500, 'driver failed');
    await assert.rejects(sut.removeContainer('x'), (err: unknown) => {
      assert.ok(err instanceof RuntimeError);
      assert.equal(err.statusCode, 500);
      assert.match(err.message, /^docker remove container x failed: .*driver failed/);
      assert.equal((err.cause as { statusCode: number }).statusCode, 500);
      return true;
    });
  });

  it('adopts the existing container on a name conflict', async () => {
    let created: Docker.ContainerCreateOptions | undefined;
    const sut = new DockerRuntime(
      fakeDocker({
        createContainer: async (opts: Docker.ContainerCreateOptions) => {
          created = opts;
          throw httpError(409, 'Conflict. The container name "/app" is already in use');
        },
        getContainer: (name: string) => ({
          inspect: async () => ({ ...runningSandboxJson(), Id: `id-of-${name}` }),
        }),
      }),
    );
    const id = await sut.createContainer('sandbox-1', {
      name: 'app',
      image: 'jetlet/busybox:1.35',
      entrypoint: ['sleep'],
      cmd: [],
      env: [{ name: 'A', value: 'x=y' }],
      labels: { k: 'v' },
      memoryLimitBytes: 1024,
    });
    assert.equal(id, 'id-of-app');
    assert.deepEqual(created, {
      name: 'app',
      Image: 'jetlet/busybox:1.35',
      Entrypoint: ['sleep'],
      Env: ['A=x=y'],
      Labels: { k: 'v' },
      HostConfig: { NetworkMode: 'container:sandbox-1', Memory: 1024 },
    });
  });

  it('opens the stdin and terminal a container asks for, and joins the PID namespace it names', async () => {
    let created: Docker.ContainerCreateOptions | undefined;
    const sut = new DockerRuntime(
      fakeDocker({
        createContainer: async (opts: Docker.ContainerCreateOptions) => {
          created = opts;
          return { id: 'new-id' };
        },
      }),
    );
    await sut.createContainer('sandbox-1', {
      name: 'dbg',
      image: 'jetlet/busybox:1.35',
      env: [],
      labels: {},
      openStdin: true,
      stdinOnce: true,
      tty: true,
      pidOf: 'target-id',
    });
    assert.equal(created?.OpenStdin, true);
    assert.equal(created?.StdinOnce, true);
    assert.equal(created?.Tty, true);
    assert.equal(created?.HostConfig?.PidMode, 'container:target-id');
    await sut.createContainer('sandbox-1', { name: 'plain', image: 'jetlet/busybox:1.35', env: [], labels: {} });
    assert.equal(created?.OpenStdin, undefined);
    assert.equal(created?.Tty, undefined);
    assert.equal(created?.HostConfig?.PidMode, undefined);
  });
});

describe('DockerRuntime keeps the list of a watched label set until something changes', () => {
  const NODE = { 'io.jetlet.node': 'n1' };
  const event = (id: string, action: string): string =>
    JSON.stringify({ Type: 'container', Action: action, Actor: { ID: id, Attributes: {} }, timeNano: 1e15 }) + '\n';

  /** An engine with one running container, counting list calls, and a runtime on a clock the test moves. */
  function engine(state = 'running'): { sut: DockerRuntime; stream: PassThrough; lists: () => number; clock: { ms: number } } {
    const json = runningSandboxJson();
    json.State = { ...json.State, Status: state };
    const stream = new PassThrough();
    let lists = 0;
    const clock = { ms: 1_000_000 };
    const sut = new DockerRuntime(
      fakeDocker({
        getEvents: async () => stream,
        listContainers: async () => {
          lists++;
          return [{ Id: json.Id, State: state }];
        },
        getContainer: () => ({ inspect: async () => structuredClone(json), start: async () => undefined }),
      }),
      { relistSeconds: 60, now: () => clock.ms },
    );
    return { sut, stream, lists: () => lists, clock };
  }

  /** Follows the runtime's event stream for NODE until the signal aborts, counting events. */
  function watch(sut: DockerRuntime, signal: AbortSignal): { subscribed: Promise<void>; seen: () => number; done: Promise<void> } {
    let seen = 0;
    let subscribed: () => void = () => undefined;
    const ready = new Promise<void>((resolve) => (subscribed = resolve));
    const done = (async () => {
      for await (const _event of sut.events(NODE, signal, subscribed)) seen++;
    })();
    return { subscribed: ready, seen: () => seen, done };
  }

  it('asks the engine every time while no event stream with those labels is open', async () => {
    const { sut, lists } = engine();
    await sut.listContainers(NODE);
    await sut.listContainers(NODE);
    assert.equal(lists(), 2);
  });

  it('answers from the kept list while the stream is open and quiet, and asks again after an event', async () => {
    const { sut, stream, lists } = engine();
    const controller = new AbortController();
    const watching = watch(sut, controller.signal);
    await watching.subscribed;
    const first = await sut.listContainers(NODE);
    const second = await sut.listContainers(NODE);
    assert.equal(lists(), 1);
    assert.deepEqual(second, first);
    assert.equal((await sut.listContainers({ 'io.jetlet.pod.uid': 'u' })).length, 1);
    assert.equal(lists(), 2, 'other labels are not watched: asked afresh');
    stream.write(event('a', 'die'));
    await waitUntil(() => watching.seen() === 1);
    await sut.listContainers(NODE);
    assert.equal(lists(), 3);
    controller.abort();
    await watching.done;
  });

  it('asks again after its own start of a container, after the relist period, and once the stream is gone', async () => {
    const { sut, lists, clock } = engine();
    const controller = new AbortController();
    const watching = watch(sut, controller.signal);
    await watching.subscribed;
    await sut.listContainers(NODE);
    await sut.startContainer('a');
    await sut.listContainers(NODE);
    assert.equal(lists(), 2, 'a start of its own');
    clock.ms += 59_999;
    await sut.listContainers(NODE);
    assert.equal(lists(), 2);
    clock.ms += 1;
    await sut.listContainers(NODE);
    assert.equal(lists(), 3, 'the relist period ran out');
    controller.abort();
    await watching.done;
    await sut.listContainers(NODE);
    await sut.listContainers(NODE);
    assert.equal(lists(), 5, 'no stream, no kept list');
  });

  it('asks again once its own stop of a container returned, though a list taken meanwhile still saw it running', async () => {
    const json = runningSandboxJson();
    let stopped: () => void = () => undefined;
    const stopping = new Promise<void>((resolve) => (stopped = resolve));
    let lists = 0;
    const stream = new PassThrough();
    const sut = new DockerRuntime(
      fakeDocker({
        getEvents: async () => stream,
        listContainers: async () => {
          lists++;
          return [{ Id: json.Id, State: 'running' }];
        },
        getContainer: () => ({ inspect: async () => structuredClone(json), stop: () => stopping }),
      }),
    );
    const controller = new AbortController();
    const watching = watch(sut, controller.signal);
    await watching.subscribed;
    const stop = sut.stopContainer(json.Id, 30);
    // The grace period runs: the container still runs, and the list taken now says so.
    await sut.listContainers(NODE);
    await sut.listContainers(NODE);
    assert.equal(lists, 1);
    stopped();
    await stop;
    // Stopped, before its die is read: that list no longer stands.
    await sut.listContainers(NODE);
    assert.equal(lists, 2);
    controller.abort();
    await watching.done;
  });

  it('keeps no list asked for under an event stream that ended while it was under way', async () => {
    const json = runningSandboxJson();
    const streams = [new PassThrough(), new PassThrough()];
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    let lists = 0;
    const sut = new DockerRuntime(
      fakeDocker({
        getEvents: async () => streams.shift(),
        listContainers: async () => {
          if (++lists === 1) await held;
          return [{ Id: json.Id, State: 'running' }];
        },
        getContainer: () => ({ inspect: async () => structuredClone(json) }),
      }),
    );
    const first = new AbortController();
    const before = watch(sut, first.signal);
    await before.subscribed;
    const listing = sut.listContainers(NODE);
    first.abort();
    await before.done;
    const second = new AbortController();
    const after = watch(sut, second.signal);
    await after.subscribed;
    release();
    await listing;
    await sut.listContainers(NODE);
    assert.equal(lists, 2, 'the list taken across the gap between the streams is not kept');
    second.abort();
    await after.done;
  });

  it('inspects again what it inspected before the stream it watches opened, and at each relist', async () => {
    const json = runningSandboxJson();
    json.State = { ...json.State, Status: 'exited' };
    const streams = [new PassThrough(), new PassThrough()];
    const clock = { ms: 1_000_000 };
    let inspects = 0;
    const sut = new DockerRuntime(
      fakeDocker({
        getEvents: async () => streams.shift(),
        listContainers: async () => [{ Id: json.Id, State: 'exited' }],
        getContainer: () => ({
          inspect: async () => {
            inspects++;
            return structuredClone(json);
          },
        }),
      }),
      { relistSeconds: 60, now: () => clock.ms },
    );
    const first = new AbortController();
    const before = watch(sut, first.signal);
    await before.subscribed;
    await sut.listContainers(NODE);
    assert.equal(inspects, 1);
    first.abort();
    await before.done;
    const second = new AbortController();
    const after = watch(sut, second.signal);
    await after.subscribed;
    // Between the streams an event may have been lost (an oom after its die): the state the list shows is the same.
    await sut.listContainers(NODE);
    assert.equal(inspects, 2, 'inspected again under the new stream');
    clock.ms += 30_000;
    // A list of other labels, while the kept one stands: the inspect stands too.
    await sut.listContainers({ 'io.jetlet.pod.uid': 'u' });
    assert.equal(inspects, 2);
    clock.ms += 30_000;
    await sut.listContainers(NODE);
    assert.equal(inspects, 3, 'the relist period ran out: inspected again');
    second.abort();
    await after.done;
  });

  it('keeps no list that holds a container in a passing state', async () => {
    const { sut, lists } = engine('created');
    const controller = new AbortController();
    const watching = watch(sut, controller.signal);
    await watching.subscribed;
    await sut.listContainers(NODE);
    await sut.listContainers(NODE);
    assert.equal(lists(), 2);
    controller.abort();
    await watching.done;
  });
});
