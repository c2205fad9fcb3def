import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { busTls, tlsOptions } from './credentials.js';

describe('NATS TLS options', () => {
  it('are absent without NATS_TLS_* settings, so the connection stays as the server offers', () => {
    assert.equal(busTls({}), undefined);
    assert.equal(busTls({ NATS_TLS_CA_FILE: '' }), undefined);
    assert.deepEqual(tlsOptions(undefined), {});
  });

  it("map the settings to nats.js's tls options, whose presence makes the client require TLS", () => {
    const dir = mkdtempSync(join(tmpdir(), 'jetlet-bus-tls-'));
    try {
      for (const f of ['ca.crt', 'client.crt', 'client.key']) writeFileSync(join(dir, f), 'pem');
      const sut = busTls({ NATS_TLS_CA_FILE: join(dir, 'ca.crt'), NATS_TLS_CERT_FILE: join(dir, 'client.crt'), NATS_TLS_KEY_FILE: join(dir, 'client.key') });
      assert.deepEqual(tlsOptions(sut), { tls: { caFile: join(dir, 'ca.crt'), certFile: join(dir, 'client.crt'), keyFile: join(dir, 'client.key') } });
      assert.deepEqual(tlsOptions(busTls({ NATS_TLS_CA_FILE: join(dir, 'ca.crt') })), { tls: { caFile: join(dir, 'ca.crt') } });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('fail at start when a file cannot be read, instead of retrying the connection forever', () => {
    assert.throws(() => tlsOptions({ caFile: join(tmpdir(), 'jetlet-no-such-ca.crt') }), /ENOENT/);
  });
});
