import 'reflect-metadata';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { endStatus, parseTerminalSize } from './remote-command.js';
import { parseRemoteCommandQuery } from './pod-streams.service.js';

describe('the remote command error channel', () => {
  it('says Success for exit code 0 and for an attach that ended', () => {
    assert.equal(endStatus({ kind: 'end', end: { exitCode: 0 } })?.status, 'Success');
    assert.equal(endStatus({ kind: 'end', end: {} })?.status, 'Success');
  });

  it('reports a non-zero exit code the way kubectl turns it into its own', () => {
    const status = endStatus({ kind: 'end', end: { exitCode: 3 } });
    assert.equal(status?.status, 'Failure');
    assert.equal(status?.reason, 'NonZeroExitCode');
    assert.deepEqual(status?.details?.causes, [{ reason: 'ExitCode', message: '3' }]);
  });

  it('reports a broken stream as a failure with its message, and says nothing to a client that left', () => {
    assert.deepEqual(endStatus({ kind: 'failed', message: 'the agent went silent' }), {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'the agent went silent',
      reason: 'InternalError',
      code: 500,
    });
    assert.equal(endStatus({ kind: 'end', end: { code: 503, reason: 'ServiceUnavailable', message: 'stopping' } })?.code, 503);
    assert.equal(endStatus({ kind: 'cancelled' }), undefined);
  });
});

describe('remote command input', () => {
  it('reads a terminal size and ignores anything else', () => {
    assert.deepEqual(parseTerminalSize(Buffer.from('{"Width":120,"Height":40}')), { width: 120, height: 40 });
    assert.equal(parseTerminalSize(Buffer.from('{"Width":-1,"Height":40}')), undefined);
    assert.equal(parseTerminalSize(Buffer.from('nope')), undefined);
    assert.equal(parseTerminalSize(Buffer.from('null')), undefined);
  });

  it('reads kubectl exec query: repeated commands, booleans, stderr folded into a terminal', () => {
    assert.deepEqual(parseRemoteCommandQuery({ command: ['sh', '-c', 'echo'], container: 'main', stdout: 'true', stderr: 'true' }), {
      container: 'main',
      command: ['sh', '-c', 'echo'],
      stdin: false,
      stdout: true,
      stderr: true,
      tty: false,
    });
    assert.deepEqual(parseRemoteCommandQuery({ command: 'sh', stdin: '1', stdout: 'true', stderr: 'true', tty: 'true' }), {
      command: ['sh'],
      stdin: true,
      stdout: true,
      stderr: false,
      tty: true,
    });
    assert.throws(() => parseRemoteCommandQuery({ command: 'sh', stdin: 'yes' }), /invalid value for stdin/);
  });
});
