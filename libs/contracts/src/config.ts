import { plainToInstance, type ClassConstructor } from 'class-transformer';
import { getMetadataStorage, IsInt, IsOptional, IsString, Matches, Max, Min, ValidateIf, validateSync } from './class-validator.js';
import { flattenValidationErrors } from './validation.js';

/** What every process needs to reach the bus; each app's configuration extends it. */
export class BusConfig {
  /** The NATS servers, comma-separated; give every server of a cluster. */
  @IsString()
  NATS_URL: string = 'nats://127.0.0.1:4222';

  /** Replicas of every stream this process creates or updates: 1 for one server, 3 for a three-server cluster. */
  @IsInt()
  @Min(1)
  @Max(5)
  STREAM_REPLICAS: number = 1;

  /** The file holding this component's NATS nkey seed (`jetctl nats-config` writes it); unset, it connects anonymously and warns. */
  @IsOptional()
  @IsString()
  NATS_NKEY_SEED_FILE?: string = undefined;

  /**
   * The CA (PEM) that signed the NATS server's certificate (`jetctl nats-tls` makes one). Set,
   * the connection must be TLS and the server's certificate must chain to it; unset, the
   * client still upgrades when the server asks for TLS, checking the system's CAs.
   */
  @IsOptional()
  @IsString()
  NATS_TLS_CA_FILE?: string = undefined;

  /** This process's client certificate (PEM), for a server with `verify: true`; needs NATS_TLS_KEY_FILE. */
  @ValidateIf((c: BusConfig) => c.NATS_TLS_CERT_FILE !== undefined || c.NATS_TLS_KEY_FILE !== undefined)
  @IsString({ message: 'NATS_TLS_CERT_FILE and NATS_TLS_KEY_FILE go together' })
  NATS_TLS_CERT_FILE?: string = undefined;

  /** The key (PEM) of NATS_TLS_CERT_FILE. */
  @ValidateIf((c: BusConfig) => c.NATS_TLS_CERT_FILE !== undefined || c.NATS_TLS_KEY_FILE !== undefined)
  @IsString({ message: 'NATS_TLS_CERT_FILE and NATS_TLS_KEY_FILE go together' })
  NATS_TLS_KEY_FILE?: string = undefined;

  /**
   * The key that seals Secret values in the stream (AES-256-GCM): `[keyId:]base64 of 32
   * bytes`. The API and every agent must hold the same one; unset, values are stored in
   * base64 only, as Kubernetes' default `identity` provider.
   */
  @IsOptional()
  @Matches(/^([A-Za-z0-9_-]{1,64}:)?[A-Za-z0-9+/]{43}=$/, { message: 'Invalid value: SECRET_ENCRYPTION_KEY must be [keyId:]base64 of 32 bytes' })
  SECRET_ENCRYPTION_KEY?: string = undefined;
}

/** Thrown at boot with every bad environment variable, not just the first. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/**
 * Reads configuration from the environment into a validated class instance. Properties
 * of the class are environment variable names; class-transformer's implicit conversion
 * turns "10" into 10 where the property is a number.
 */
export function loadConfig<T extends object>(cls: ClassConstructor<T>, env: NodeJS.ProcessEnv = process.env): T {
  // Every validated property is a variable, optional ones without a default included.
  const validated = getMetadataStorage()
    .getTargetValidationMetadatas(cls, '', false, false)
    .map((m) => m.propertyName);
  const known = [...new Set([...Object.keys(new cls()), ...validated])];
  const plain = Object.fromEntries(known.filter((k) => env[k] !== undefined && env[k] !== '').map((k) => [k, env[k]]));
  const config = Object.assign(new cls(), plainToInstance(cls, plain, { enableImplicitConversion: true }));
  const errors = validateSync(config);
  if (errors.length > 0) {
    const lines = flattenValidationErrors(errors).map((c) => `  ${c.field}: ${c.message}`);
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  return config;
}
