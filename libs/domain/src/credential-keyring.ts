/**
 * The kubelet's credential keyring (pkg/credentialprovider/keyring.go): the registry
 * credentials of a pod's `imagePullSecrets`, keyed by registry location, looked up by image.
 * Pure: it reads only the secret records it is given.
 */

/** One set of credentials for a registry, in the shape the Docker engine's pull takes. */
export interface RegistryCredentials {
  username?: string;
  password?: string;
  /** The registry the credentials were given for (the config key, without scheme). */
  serveraddress: string;
  identitytoken?: string;
  registrytoken?: string;
}

/** What the keyring reads of a Secret: its type and its base64 values. */
export interface PullSecret {
  name: string;
  type?: string;
  data?: Record<string, string>;
}

export const DOCKER_CONFIG_JSON_TYPE = 'kubernetes.io/dockerconfigjson';
export const DOCKER_CONFIG_JSON_KEY = '.dockerconfigjson';
export const DOCKERCFG_TYPE = 'kubernetes.io/dockercfg';
export const DOCKERCFG_KEY = '.dockercfg';

const DEFAULT_REGISTRY = 'docker.io';
/** Locations that mean Docker Hub in a docker config (the CLI writes the first). */
const DEFAULT_REGISTRY_ALIASES = new Set(['index.docker.io', 'index.docker.io/v1', 'index.docker.io/v1/', 'registry-1.docker.io', 'docker.io']);

interface Location {
  host: string;
  port: string;
  path: string;
}

/** `host[:port][/path]` with an optional http(s) scheme, as the kubelet's parseSchemelessURL reads it. */
function parseLocation(value: string): Location | undefined {
  const withScheme = /^https?:\/\//.test(value) ? value : `https://${value}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    return undefined;
  }
  if (url.hostname === '') return undefined;
  return { host: url.hostname, port: url.port, path: url.pathname === '/' ? '' : url.pathname };
}

function keyOf(value: string): string | undefined {
  const stripped = value.replace(/^https?:\/\//, '');
  if (DEFAULT_REGISTRY_ALIASES.has(stripped)) return DEFAULT_REGISTRY;
  const location = parseLocation(value);
  if (!location) return undefined;
  return `${location.host}${location.port ? `:${location.port}` : ''}${location.path}`;
}

/** The repository part of an image reference with its registry made explicit (`busybox` → `docker.io/library/busybox`). */
export function imageRepository(image: string): string {
  const name = image.split('@')[0] ?? image;
  const lastSlash = name.lastIndexOf('/');
  const lastColon = name.lastIndexOf(':');
  const repository = lastColon > lastSlash ? name.slice(0, lastColon) : name;
  const first = repository.split('/')[0] ?? '';
  const hasRegistry = repository.includes('/') && (first.includes('.') || first.includes(':') || first === 'localhost');
  if (hasRegistry) return repository;
  return repository.includes('/') ? `${DEFAULT_REGISTRY}/${repository}` : `${DEFAULT_REGISTRY}/library/${repository}`;
}

/** The kubelet's URLsMatch: host labels matched as globs, ports equal, the image path under the key's path. */
function matches(key: string, repository: string): boolean {
  const glob = parseLocation(key);
  const target = parseLocation(repository);
  if (!glob || !target) return false;
  const globParts = glob.host.split('.');
  const targetParts = target.host.split('.');
  if (globParts.length !== targetParts.length) return false;
  if (!globParts.every((part, i) => globMatch(part, targetParts[i] ?? ''))) return false;
  if (glob.port !== target.port) return false;
  return target.path.startsWith(glob.path);
}

/** Go's filepath.Match for one host label: `*` any run, `?` one character. */
function globMatch(pattern: string, value: string): boolean {
  const source = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${source}$`).test(value);
}

interface ConfigEntry {
  username?: unknown;
  password?: unknown;
  auth?: unknown;
  identitytoken?: unknown;
  registrytoken?: unknown;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** One docker config entry as the kubelet's DockerConfigEntry reads it: `auth` (base64 user:password) wins over the fields. */
function credentialsOf(serveraddress: string, entry: ConfigEntry): RegistryCredentials {
  const credentials: RegistryCredentials = { serveraddress };
  if (typeof entry.username === 'string') credentials.username = entry.username;
  if (typeof entry.password === 'string') credentials.password = entry.password;
  if (typeof entry.auth === 'string' && entry.auth !== '') {
    const decoded = Buffer.from(entry.auth, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon >= 0) {
      credentials.username = decoded.slice(0, colon);
      credentials.password = decoded.slice(colon + 1);
    }
  }
  if (typeof entry.identitytoken === 'string' && entry.identitytoken !== '') credentials.identitytoken = entry.identitytoken;
  if (typeof entry.registrytoken === 'string' && entry.registrytoken !== '') credentials.registrytoken = entry.registrytoken;
  return credentials;
}

/** The `auths` map of a `.dockerconfigjson`, or the whole of a legacy `.dockercfg`; undefined when unreadable. */
function configEntries(secret: PullSecret): Record<string, unknown> | undefined {
  const [key, nested] =
    secret.type === DOCKER_CONFIG_JSON_TYPE ? [DOCKER_CONFIG_JSON_KEY, true] : secret.type === DOCKERCFG_TYPE ? [DOCKERCFG_KEY, false] : [undefined, false];
  const encoded = key === undefined ? undefined : secret.data?.[key];
  if (encoded === undefined || encoded === '') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(encoded, 'base64').toString('utf8'));
  } catch {
    return undefined;
  }
  if (!isRecord(parsed)) return undefined;
  if (!nested) return parsed;
  return isRecord(parsed['auths']) ? parsed['auths'] : undefined;
}

export class CredentialKeyring {
  private readonly byKey = new Map<string, RegistryCredentials[]>();

  /**
   * The keyring of a pod's pull secrets, in the order the pod names them. Secrets of another
   * type, or whose config does not parse, add nothing, as in the kubelet's MakeDockerKeyring.
   */
  static fromSecrets(secrets: readonly PullSecret[]): CredentialKeyring {
    const keyring = new CredentialKeyring();
    for (const secret of secrets) {
      const entries = configEntries(secret);
      if (!entries) continue;
      for (const [location, entry] of Object.entries(entries)) {
        const key = keyOf(location);
        if (key === undefined || !isRecord(entry)) continue;
        const list = keyring.byKey.get(key) ?? [];
        list.push(credentialsOf(location.replace(/^https?:\/\//, ''), entry));
        keyring.byKey.set(key, list);
      }
    }
    return keyring;
  }

  get size(): number {
    return this.byKey.size;
  }

  /**
   * Every set of credentials whose location matches `image`, most specific location first
   * (the kubelet sorts its index in reverse so `host/a/b` precedes `host/a` and `host`).
   * Empty: pull without credentials.
   */
  lookup(image: string): RegistryCredentials[] {
    const repository = imageRepository(image);
    const keys = [...this.byKey.keys()].sort().reverse();
    return keys.filter((key) => matches(key, repository)).flatMap((key) => this.byKey.get(key) ?? []);
  }
}
