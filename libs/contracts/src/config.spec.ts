import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BusConfig, ConfigError, loadConfig } from './index.js';

describe('BusConfig', () => {
  it('defaults to one local server and one replica per stream', () => {
    const sut = loadConfig(BusConfig, {});
    assert.equal(sut.NATS_URL, 'nats://127.0.0.1:4222');
    assert.equal(sut.STREAM_REPLICAS, 1);
  });

  it('takes three replicas for a three-server cluster', () => {
    const sut = loadConfig(BusConfig, { NATS_URL: 'nats://a:4222,nats://b:4222,nats://c:4222', STREAM_REPLICAS: '3' });
    assert.equal(sut.STREAM_REPLICAS, 3);
  });

  it('rejects a replica count JetStream cannot have, naming the variable', () => {
    for (const bad of ['0', '6', '2.5', 'three']) {
      assert.throws(
        () => loadConfig(BusConfig, { STREAM_REPLICAS: bad }),
        (error: unknown) => error instanceof ConfigError && /STREAM_REPLICAS/.test(error.message),
        bad,
      );
    }
  });

  it('takes NATS TLS files, and refuses a client certificate without its key or a key without its certificate', () => {
    const sut = loadConfig(BusConfig, { NATS_TLS_CA_FILE: '/tls/ca.crt', NATS_TLS_CERT_FILE: '/tls/client.crt', NATS_TLS_KEY_FILE: '/tls/client.key' });
    assert.deepEqual([sut.NATS_TLS_CA_FILE, sut.NATS_TLS_CERT_FILE, sut.NATS_TLS_KEY_FILE], ['/tls/ca.crt', '/tls/client.crt', '/tls/client.key']);
    assert.equal(loadConfig(BusConfig, { NATS_TLS_CA_FILE: '/tls/ca.crt' }).NATS_TLS_CERT_FILE, undefined);
    for (const [set, missing] of [
      ['NATS_TLS_CERT_FILE', 'NATS_TLS_KEY_FILE'],
      ['NATS_TLS_KEY_FILE', 'NATS_TLS_CERT_FILE'],
    ] as const) {
      assert.throws(
        () => loadConfig(BusConfig, { [set]: '/tls/file.pem' }),
        (error: unknown) => error instanceof ConfigError && error.message.includes(`${missing}:`),
        set,
      );
    }
  });
});
