import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/** Why a sealed Secret could not be opened. */
export class SecretSealError extends Error {
  override readonly name = 'SecretSealError';
}

/**
 * Secret values at rest in the stream: AES-256-GCM, as Kubernetes' `aesgcm` encryption
 * provider, with a fresh 96-bit nonce per write and the Secret's `<namespace>/<name>` as
 * additional data, so a sealed value copied onto another Secret's subject does not open.
 * Sealed text: `v1:<keyId>:<nonce>:<ciphertext and tag>`, parts in base64; the plain text is JSON.
 */
export class SecretBox {
  private readonly key: Buffer;

  constructor(
    readonly keyId: string,
    key: Buffer,
  ) {
    if (key.length !== 32) throw new SecretSealError('the secret encryption key must be 32 bytes');
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(keyId)) throw new SecretSealError('the secret key id must be 1-64 of [A-Za-z0-9_-]');
    this.key = key;
  }

  /** The box of a configured `keyId:base64key` (or a bare base64 key, id `k1`); undefined when none is set. */
  static fromConfig(value: string | undefined): SecretBox | undefined {
    if (value === undefined || value === '') return undefined;
    const [keyId, encoded] = value.includes(':') ? (value.split(':', 2) as [string, string]) : ['k1', value];
    return new SecretBox(keyId, Buffer.from(encoded, 'base64'));
  }

  seal(value: object, name: string): string {
    const nonce = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, nonce);
    cipher.setAAD(Buffer.from(name));
    const body = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return `v1:${this.keyId}:${nonce.toString('base64')}:${body.toString('base64')}`;
  }

  open(sealed: string, name: string): unknown {
    const [version, keyId, nonce, body] = sealed.split(':');
    if (version !== 'v1' || nonce === undefined || body === undefined) throw new SecretSealError('not a sealed secret');
    if (keyId !== this.keyId) throw new SecretSealError(`sealed with key ${keyId ?? '?'}, this process holds ${this.keyId}`);
    const bytes = Buffer.from(body, 'base64');
    if (bytes.length < 16) throw new SecretSealError('sealed secret too short');
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(nonce, 'base64'));
      decipher.setAAD(Buffer.from(name));
      decipher.setAuthTag(bytes.subarray(bytes.length - 16));
      const plain = Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - 16)), decipher.final()]).toString('utf8');
      return JSON.parse(plain) as unknown;
    } catch (error) {
      throw new SecretSealError('the sealed secret does not open with this key', { cause: error });
    }
  }
}
