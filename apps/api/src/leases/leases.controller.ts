import { All, Controller, Get, Inject, Logger, Param, Query } from '@nestjs/common';
import { BUS, BusUnavailableError, type Bus } from '#bus';
import { ContractValidationError, LEASES, STREAMS, SUBJECTS } from '#contracts';
import { LEASE_NAMESPACE, leaseView, type LeaseObject } from '#domain';
import { KubeStatusException } from '../errors/kube-status.exception.js';
import { parseListOptions, selected, type ListOptions } from '../options/list-options.js';

const LEASE_SELECTABLE_FIELDS = ['metadata.name', 'metadata.namespace'] as const;
const DETAILS = { group: 'coordination.k8s.io', kind: 'leases' };

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
 * only by those they elect, over the bus; the API answers a write or a watch of them 405.
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
    refuseWatch(parseListOptions(query, LEASE_SELECTABLE_FIELDS));
    const lease = namespace === LEASE_NAMESPACE && Object.values<string>(LEASES).includes(name) ? (await this.read([name])).leases[0] : undefined;
    if (!lease) throw new KubeStatusException(404, 'NotFound', `leases.coordination.k8s.io "${name}" not found`, { name, ...DETAILS });
    return lease;
  }

  /** Any other method, on a lease or on the collection: 405, as kube-apiserver answers a verb a resource does not serve. */
  @All(['leases', 'namespaces/:namespace/leases', 'namespaces/:namespace/leases/:name'])
  refuse(): never {
    throw new KubeStatusException(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource', DETAILS);
  }

  private async list(namespace: string | undefined, query: Record<string, unknown>): Promise<LeaseList> {
    const options = parseListOptions(query, LEASE_SELECTABLE_FIELDS);
    refuseWatch(options);
    const { leases, lastSeq } = await this.read(namespace === undefined || namespace === LEASE_NAMESPACE ? Object.values(LEASES) : []);
    const items = leases.filter((l) => selected(options, undefined, () => ({ 'metadata.name': l.metadata.name, 'metadata.namespace': l.metadata.namespace })));
    return { kind: 'LeaseList', apiVersion: 'coordination.k8s.io/v1', metadata: { resourceVersion: String(lastSeq) }, items };
  }

  /** The named leases that have a record, from their last one; and the stream's last sequence. */
  private async read(names: readonly string[]): Promise<{ leases: LeaseObject[]; lastSeq: number }> {
    // A read while the connection is down would only wait out its timeout: say at once that the bus is not there.
    if (!this.bus.connected) throw new BusUnavailableError('NATS is unreachable');
    const records = [];
    for (const name of names) {
      const last = await this.bus.lastMessage(STREAMS.leases, SUBJECTS.lease(name)).catch((error: unknown) => {
        if (!(error instanceof ContractValidationError)) throw error;
        this.logger.warn(`the ${name} lease's last record is not a valid LeaseRenewed: ${error.message}`);
        return undefined;
      });
      if (last?.envelope.type === 'LeaseRenewed') records.push({ lease: last.envelope.data, seq: last.seq });
    }
    // After the records: the list's resourceVersion is never older than one of its items'.
    const info = await this.bus.jsm.streams.info(STREAMS.leases);
    return { leases: records.map((r) => leaseView(r.lease, r.seq, info.created)), lastSeq: info.state.last_seq };
  }
}

/** Leases are read when asked, not followed: a watch of them is refused, in kube-apiserver's words, rather than answered with a list. */
function refuseWatch(options: ListOptions): void {
  if (options.watch) {
    throw new KubeStatusException(405, 'MethodNotAllowed', 'watch is not supported on resources of kind "leases.coordination.k8s.io"', DETAILS);
  }
}
