import { Inject, Injectable } from '@nestjs/common';
import { BUS, type Bus } from '#bus';
import { STREAMS, SUBJECTS } from '#contracts';
import { ConfigTable, type ConfigRecord } from '#domain/config-table';
import type { ConfigRefs } from '#domain/container-env';
import { SecretBox } from '#domain/secret-box';
import { AGENT_CONFIG } from '../agent.constants.js';
import type { AgentConfig } from '../agent.config.js';

/** The objects a pod reads, by name; undefined = not found. */
export interface PodConfigObjects {
  configMaps: Map<string, ConfigRecord | undefined>;
  secrets: Map<string, ConfigRecord | undefined>;
}

/**
 * The kubelet's ConfigMap and Secret managers: the agent reads only the objects its pods
 * name, each by its subject's newest message (one Direct Get; the config stream keeps one
 * message per subject), when a container is made and at each resync for volumes. Nothing is
 * cached between reads, so no stale or deleted value outlives a sync period.
 */
@Injectable()
export class ConfigSource {
  private readonly box: SecretBox | undefined;

  constructor(
    @Inject(BUS) private readonly bus: Bus,
    @Inject(AGENT_CONFIG) config: AgentConfig,
  ) {
    this.box = SecretBox.fromConfig(config.SECRET_ENCRYPTION_KEY);
  }

  async read(kind: 'ConfigMap' | 'Secret', namespace: string, name: string): Promise<ConfigRecord | undefined> {
    const subject = kind === 'ConfigMap' ? SUBJECTS.configMap(namespace, name) : SUBJECTS.secret(namespace, name);
    const last = await this.bus.lastMessage(STREAMS.config, subject);
    if (!last) return undefined;
    const box = this.box;
    const table = new ConfigTable(kind, box ? (sealed, key) => box.open(sealed, key) : undefined);
    const record = table.apply(last.envelope, last.seq);
    return record && !record.removed ? record : undefined;
  }

  async readAll(namespace: string, refs: ConfigRefs): Promise<PodConfigObjects> {
    const read = async (kind: 'ConfigMap' | 'Secret', names: Set<string>): Promise<Map<string, ConfigRecord | undefined>> =>
      new Map(await Promise.all([...names].map(async (n) => [n, await this.read(kind, namespace, n)] as const)));
    const [configMaps, secrets] = await Promise.all([read('ConfigMap', refs.configMaps), read('Secret', refs.secrets)]);
    return { configMaps, secrets };
  }
}
