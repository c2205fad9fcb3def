import { Controller, Get, Inject, Logger, Param, Query } from '@nestjs/common';
import { BUS, type Bus } from '#bus';
import { ContractValidationError, LEASES, STREAMS, SUBJECTS } from '#contracts';
import { LEASE_NAMESPACE, leaseView, type LeaseObject } from '#domain';
import { KubeStatusException } from '../errors/kube-status.exception.js';
import { parseListOptions, queryValue, selected } from '../options/list-options.js';

const LEASE_SELECTABLE_FIELDS = ['metadata.name', 'metadata.namespace'] as const;
const TRUE = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);

interface LeaseList {
  kind: 'LeaseList';
  apiVersion: 'coordination.k8s.io/v1';
  metadata: { resourceVersion: string };
  items: LeaseObject[];
}

/**
 * Kubernetes coordination.k8s.io/v1 leases, read-only: the leader-election leases of the
 * leases stream (the scheduler's `kube-system/kube-scheduler`), each read from its last
 * record when asked, so `kubectl get lease -n kube-system` shows who leads. They are written
 * only by those they elect, over the bus; the API serves no write and no watch of them.
 */
@Controller('apis/coordination.k8s.io/v1')
export class LeasesController {
  private readonly logger = new Logger(LeasesController.name);

  constructor(@Inject(BUS) private readonly bus: Bus) {}

  @Get('leases')
  listAll(@Query() query: Record<string, unknown>): Promise<LeaseList> {
    return this.list(undefined, query);
  }

  @Get('namespaces/:namespace/leases')
  listNamespaced(@Param('namespace') namespace: string, @Query() query: Record<string, unknown>): Promise<LeaseList> {
    return this.list(namespace, query);
  }

  @Get('namespaces/:namespace/leases/:name')
  async get(@Param('namespace') namespace: string, @Param('name') name: string, @Query() query: Record<string, unknown>): Promise<LeaseObject> {
    refuseWatch(query);
    const lease = namespace === LEASE_NAMESPACE && Object.values<string>(LEASES).includes(name) ? (await this.read([name])).leases[0] : undefined;
    if (!lease)
      throw new KubeStatusException(404, 'NotFound', `leases.coordination.k8s.io "${name}" not found`, { name, group: 'coordination.k8s.io', kind: 'leases' });
    return lease;
  }

  private async list(namespace: string | undefined, query: Record<string, unknown>): Promise<LeaseList> {
    refuseWatch(query);
    const options = parseListOptions(query, LEASE_SELECTABLE_FIELDS);
    const { leases, lastSeq } = await this.read(namespace === undefined || namespace === LEASE_NAMESPACE ? Object.values(LEASES) : []);
    const items = leases.filter((l) => selected(options, undefined, () => ({ 'metadata.name': l.metadata.name, 'metadata.namespace': l.metadata.namespace })));
    return { kind: 'LeaseList', apiVersion: 'coordination.k8s.io/v1', metadata: { resourceVersion: String(lastSeq) }, items };
  }

  /** The named leases that have a record, from their last one; and the stream's last sequence. */
  private async read(names: readonly string[]): Promise<{ leases: LeaseObject[]; lastSeq: number }> {
    const info = await this.bus.jsm.streams.info(STREAMS.leases);
    const leases: LeaseObject[] = [];
    for (const name of names) {
      const last = await this.bus.lastMessage(STREAMS.leases, SUBJECTS.lease(name)).catch((error: unknown) => {
        if (!(error instanceof ContractValidationError)) throw error;
        this.logger.warn(`the ${name} lease's last record is not a valid LeaseRenewed: ${error.message}`);
        return undefined;
      });
      if (last?.envelope.type === 'LeaseRenewed') leases.push(leaseView(last.envelope.data, last.seq, info.created));
    }
    return { leases, lastSeq: info.state.last_seq };
  }
}

/** Leases are read when asked, not followed: a watch of them is refused rather than answered with a list. */
function refuseWatch(query: Record<string, unknown>): void {
  if (TRUE.has(queryValue(query, 'watch') ?? '')) {
    throw new KubeStatusException(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource: leases are not watched');
  }
}
