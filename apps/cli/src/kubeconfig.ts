import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { Document, parse } from 'yaml';
import type { ApiConnection } from './api-client.js';

/** The API jetctl talks to when nothing names one. */
export const DEFAULT_SERVER = 'http://127.0.0.1:8001';

/**
 * A kubeconfig that points kubectl (and jetctl) at a jetlet API: one cluster, one context,
 * with the bearer token and the certificate authority (PEM) when given. kubectl sends a token
 * only over https.
 */
export function kubeconfigFor(server: string, name = 'jetlet', credentials: { token?: string; ca?: string } = {}): string {
  const cluster = { server, ...(credentials.ca ? { 'certificate-authority-data': Buffer.from(credentials.ca).toString('base64') } : {}) };
  return new Document({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster }],
    users: [{ name, user: credentials.token ? { token: credentials.token } : {} }],
    contexts: [{ name, context: { cluster: name, user: name } }],
    'current-context': name,
  }).toString();
}

interface KubeconfigFile {
  'current-context'?: string;
  contexts?: Array<{ name?: string; context?: { cluster?: string; user?: string } }>;
  clusters?: Array<{
    name?: string;
    cluster?: { server?: string; 'certificate-authority-data'?: string; 'certificate-authority'?: string; 'insecure-skip-tls-verify'?: boolean };
  }>;
  users?: Array<{ name?: string; user?: { token?: string; tokenFile?: string } }>;
}

/** The server of the current context in the first kubeconfig file that has one ($KUBECONFIG, else ~/.kube/config), as kubectl picks it. */
export function kubeconfigServer(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return kubeconfigContext(env)?.server;
}

/** The current context of the first kubeconfig file that has one: its server, token and certificate authority, as kubectl reads them. */
export function kubeconfigContext(env: NodeJS.ProcessEnv = process.env): ApiConnection | undefined {
  const files = env.KUBECONFIG ? env.KUBECONFIG.split(delimiter).filter(Boolean) : [join(homedir(), '.kube', 'config')];
  for (const file of files) {
    if (!existsSync(file)) continue;
    let config: KubeconfigFile | null;
    try {
      config = parse(readFileSync(file, 'utf8')) as KubeconfigFile | null;
    } catch {
      continue;
    }
    const contextName = config?.['current-context'];
    if (!config || !contextName) continue;
    const context = config.contexts?.find((c) => c.name === contextName)?.context;
    const cluster = config.clusters?.find((c) => c.name === context?.cluster)?.cluster;
    const user = config.users?.find((u) => u.name === context?.user)?.user;
    if (!cluster?.server) continue;
    const caData = cluster['certificate-authority-data'];
    const caFile = cluster['certificate-authority'];
    const ca = caData ? Buffer.from(caData, 'base64').toString('utf8') : caFile ? readFileSync(caFile, 'utf8') : undefined;
    const token = user?.token ?? (user?.tokenFile ? readFileSync(user.tokenFile, 'utf8').trim() : undefined);
    return {
      server: cluster.server,
      ...(token ? { token } : {}),
      ...(ca ? { ca } : {}),
      ...(cluster['insecure-skip-tls-verify'] ? { insecureSkipTlsVerify: true } : {}),
    };
  }
  return undefined;
}

/** Where jetctl sends requests: --server, else $JETLET_SERVER, else the kubeconfig's current context, else the default. */
export function resolveServer(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  return flag ?? env.JETLET_SERVER ?? kubeconfigServer(env) ?? DEFAULT_SERVER;
}

/**
 * Server and credentials: --server and --token, else $JETLET_SERVER and $JETLET_TOKEN, else
 * the kubeconfig's current context (its token and certificate authority with it), else the
 * default server. A token given alone goes to whichever server is chosen.
 */
export function resolveConnection(flags: { server?: string; token?: string }, env: NodeJS.ProcessEnv = process.env): ApiConnection {
  const token = flags.token ?? env.JETLET_TOKEN;
  const fromFile = kubeconfigContext(env);
  const server = flags.server ?? env.JETLET_SERVER;
  const connection: ApiConnection = server !== undefined ? { server, ...(fromFile?.server === server ? fromFile : {}) } : (fromFile ?? { server: DEFAULT_SERVER });
  return { ...connection, server: connection.server, ...(token ? { token } : {}) };
}
