import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { Document, parse } from 'yaml';

/** The API jetctl talks to when nothing names one. */
export const DEFAULT_SERVER = 'http://127.0.0.1:8001';

/** A kubeconfig that points kubectl (and jetctl) at a jetlet API: one cluster, one context, no credentials. */
export function kubeconfigFor(server: string, name = 'jetlet'): string {
  return new Document({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster: { server } }],
    users: [{ name, user: {} }],
    contexts: [{ name, context: { cluster: name, user: name } }],
    'current-context': name,
  }).toString();
}

interface KubeconfigFile {
  'current-context'?: string;
  contexts?: Array<{ name?: string; context?: { cluster?: string } }>;
  clusters?: Array<{ name?: string; cluster?: { server?: string } }>;
}

/** The server of the current context in the first kubeconfig file that has one ($KUBECONFIG, else ~/.kube/config), as kubectl picks it. */
export function kubeconfigServer(env: NodeJS.ProcessEnv = process.env): string | undefined {
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
    const cluster = config.contexts?.find((c) => c.name === contextName)?.context?.cluster;
    const server = config.clusters?.find((c) => c.name === cluster)?.cluster?.server;
    if (server) return server;
  }
  return undefined;
}

/** Where jetctl sends requests: --server, else $JETLET_SERVER, else the kubeconfig's current context, else the default. */
export function resolveServer(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  return flag ?? env.JETLET_SERVER ?? kubeconfigServer(env) ?? DEFAULT_SERVER;
}
