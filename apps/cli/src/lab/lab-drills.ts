import { PassThrough } from 'node:stream';
import Docker from 'dockerode';

/** The compose project of the lab, unless `--project` or COMPOSE_PROJECT_NAME names another (see the repository's .env). */
export const DEFAULT_LAB_PROJECT = 'jetlet-lab';

/** A drill that cannot run: no such lab, no such target, a step the engine refused. */
export class LabError extends Error {
  override readonly name = 'LabError';
}

/** What a drill did, what to watch while it acts, and how to undo it. */
export interface DrillReport {
  did: string;
  watch: string[];
  undo: string;
}

const WATCH_NODES = 'kubectl get nodes,pods -o wide -w';

/** Shell run inside a node: the bytes its cgroup still lets it use (limit − working set), v1 or v2. */
const NODE_MEMORY_FREE = `
cg=$(sed -n 's/^[0-9]*:[^:]*memory[^:]*:\\(.*\\)$/\\1/p' /proc/self/cgroup)
if [ -n "$cg" ]; then d=/sys/fs/cgroup/memory$cg; limit=$(cat $d/memory.limit_in_bytes); used=$(cat $d/memory.usage_in_bytes); idle=$(sed -n 's/^total_inactive_file //p' $d/memory.stat)
else d=/sys/fs/cgroup$(sed -n 's/^0:://p' /proc/self/cgroup); limit=$(cat $d/memory.max); used=$(cat $d/memory.current); idle=$(sed -n 's/^inactive_file //p' $d/memory.stat); fi
echo $((limit - used + idle))`;

/**
 * Fault drills on the compose lab, through the Docker engine that runs it: each one a real
 * failure (a killed container, a cut network, a frozen process, a full file system) that the
 * control plane has to notice and repair. Targets are compose services: node-N (the N-th node
 * replica), nats-N, api, scheduler-N, registry.
 */
export class LabDrills {
  constructor(
    private readonly project: string,
    private readonly docker: Docker = new Docker(),
  ) {}

  /** The network nodes and the control plane share; a partition cuts a container from it. */
  private get network(): string {
    return `${this.project}_lab`;
  }

  private async containers(): Promise<Docker.ContainerInfo[]> {
    return this.docker.listContainers({ all: true, filters: { label: [`com.docker.compose.project=${this.project}`] } });
  }

  /** The container of a target: `node-2` is replica 2 of service `node`; any other name is a service. */
  private async find(target: string): Promise<Docker.ContainerInfo> {
    const all = await this.containers();
    if (all.length === 0) throw new LabError(`no lab is running under compose project "${this.project}" (start it with: npm run lab:compose)`);
    const replica = /^node-(\d+)$/.exec(target);
    const found = all.find((c) =>
      replica
        ? c.Labels['com.docker.compose.service'] === 'node' && c.Labels['com.docker.compose.container-number'] === replica[1]
        : c.Labels['com.docker.compose.service'] === target,
    );
    if (!found) {
      const names = all.map((c) => this.targetName(c)).sort();
      throw new LabError(`no lab container "${target}"; the lab has: ${names.join(', ')}`);
    }
    return found;
  }

  private targetName(c: Docker.ContainerInfo): string {
    const service = c.Labels['com.docker.compose.service'] ?? '?';
    return service === 'node' ? `node-${c.Labels['com.docker.compose.container-number']}` : service;
  }

  private isNode(c: Docker.ContainerInfo): boolean {
    return c.Labels['com.docker.compose.service'] === 'node';
  }

  /** Runs a shell script inside a running container; returns its output, throws on a non-zero exit. */
  private async exec(id: string, script: string): Promise<string> {
    const exec = await this.docker.getContainer(id).exec({ Cmd: ['sh', '-c', script], AttachStdout: true, AttachStderr: true });
    const stream = await exec.start({});
    const out = new PassThrough();
    let text = '';
    out.on('data', (chunk: Buffer) => (text += chunk.toString()));
    this.docker.modem.demuxStream(stream, out, out);
    await new Promise<void>((resolve, reject) => {
      stream.on('end', resolve);
      stream.on('error', reject);
    });
    const { ExitCode } = await exec.inspect();
    if (ExitCode !== 0) throw new LabError(`"${script.trim().split('\n')[0]}" failed in ${id.slice(0, 12)} (exit ${ExitCode ?? '?'}): ${text.trim()}`);
    return text.trim();
  }

  /** Every lab container with its state, and whether it is cut off or holds a fill file. */
  async status(): Promise<string[]> {
    const all = await this.containers();
    if (all.length === 0) return [`no lab is running under compose project "${this.project}"`];
    return all
      .map((c) => {
        const cut = !Object.keys(c.NetworkSettings.Networks).includes(this.network);
        return `${this.targetName(c).padEnd(12)} ${c.State.padEnd(8)} ${c.Status}${cut ? '  (partitioned: not on the lab network)' : ''}`;
      })
      .sort();
  }

  /** SIGKILL, as a power cut: a node's engine and pods die with it. */
  async kill(target: string): Promise<DrillReport> {
    const c = await this.find(target);
    await this.docker.getContainer(c.Id).kill();
    return {
      did: `killed ${target} (${c.Names[0]?.slice(1)})`,
      watch: this.isNode(c)
        ? [
            WATCH_NODES,
            `${target} turns NotReady after NODE_GRACE_SECONDS; its pods are evicted after their toleration (EVICTION_TOLERATION_SECONDS) and rescheduled`,
          ]
        : this.controlPlaneWatch(target),
      undo: `jetctl lab start ${target}`,
    };
  }

  async start(target: string): Promise<DrillReport> {
    const c = await this.find(target);
    await this.docker.getContainer(c.Id).start();
    return {
      did: `started ${target}`,
      watch: this.isNode(c)
        ? [WATCH_NODES, `${target} registers again and turns Ready; pods evicted meanwhile are removed from its engine`]
        : this.controlPlaneWatch(target),
      undo: `jetctl lab kill ${target}`,
    };
  }

  /** Restarts a process cleanly (SIGTERM, then start): the API rebuilds its projections, a scheduler its tables. */
  async restart(target: string): Promise<DrillReport> {
    const c = await this.find(target);
    await this.docker.getContainer(c.Id).restart({ t: 10 });
    return { did: `restarted ${target}`, watch: this.controlPlaneWatch(target), undo: 'nothing to undo: it comes back on its own' };
  }

  /** Cuts a container from the lab network: a node keeps its pods running but reaches neither NATS nor the registry. */
  async partition(target: string): Promise<DrillReport> {
    const c = await this.find(target);
    if (!Object.keys(c.NetworkSettings.Networks).includes(this.network)) throw new LabError(`${target} is already partitioned`);
    await this.docker.getNetwork(this.network).disconnect({ Container: c.Id });
    return {
      did: `disconnected ${target} from ${this.network}`,
      watch: this.isNode(c)
        ? [WATCH_NODES, `${target} turns NotReady (its heartbeats stop) while its pods keep running inside it; after the toleration they are evicted`]
        : this.controlPlaneWatch(target),
      undo: `jetctl lab heal ${target}`,
    };
  }

  async heal(target: string): Promise<DrillReport> {
    const c = await this.find(target);
    const service = c.Labels['com.docker.compose.service'] ?? target;
    await this.docker.getNetwork(this.network).connect({ Container: c.Id, EndpointConfig: { Aliases: [service] } });
    return {
      did: `connected ${target} to ${this.network} again`,
      watch: this.isNode(c)
        ? [WATCH_NODES, `${target} heartbeats again and turns Ready; it stops pods that were evicted meanwhile`]
        : this.controlPlaneWatch(target),
      undo: `jetctl lab partition ${target}`,
    };
  }

  /** Freezes every process of a node (cgroup freezer): no heartbeats, no reconcile, nothing dies. */
  async pause(target: string): Promise<DrillReport> {
    const c = await this.find(target);
    await this.docker.getContainer(c.Id).pause();
    return {
      did: `froze ${target}`,
      watch: [WATCH_NODES, `${target} turns NotReady; thawed, it carries on where it stopped`],
      undo: `jetctl lab unpause ${target}`,
    };
  }

  async unpause(target: string): Promise<DrillReport> {
    const c = await this.find(target);
    await this.docker.getContainer(c.Id).unpause();
    return { did: `thawed ${target}`, watch: [WATCH_NODES], undo: `jetctl lab pause ${target}` };
  }

  /** Fills the node's agent file system (a 128 MiB tmpfs in the lab) to 97 %: DiskPressure. */
  async fillDisk(target: string): Promise<DrillReport> {
    const c = await this.nodeTarget(target);
    const script = `set -e
avail=$(df -k /var/lib/jetlet | awk 'NR==2 {print $4}'); total=$(df -k /var/lib/jetlet | awk 'NR==2 {print $2}')
mb=$(( (avail - total * 3 / 100) / 1024 )); [ "$mb" -gt 0 ] || mb=0
dd if=/dev/zero of=/var/lib/jetlet/lab-fill bs=1M count=$mb 2>/dev/null
df -h /var/lib/jetlet | awk 'NR==2 {print $3 " used of " $2}'`;
    const used = await this.exec(c.Id, script);
    return {
      did: `filled /var/lib/jetlet on ${target}: ${used}`,
      watch: [
        `kubectl get node ${target} -o jsonpath='{.status.conditions[?(@.type=="DiskPressure")]}' (DiskPressure=True within a node status report)`,
        'jetctl get nodes -o json (the node carries DiskPressure=True until the space is freed)',
      ],
      undo: `jetctl lab unfill ${target}`,
    };
  }

  /** Takes the node's memory (a file in its /dev/shm, charged to its cgroup) until less than 100 MiB is free: MemoryPressure. */
  async fillMemory(target: string): Promise<DrillReport> {
    const c = await this.nodeTarget(target);
    const script = `set -e
free=$(${NODE_MEMORY_FREE.trim().replace(/\n/g, '; ')})
mb=$(( free / 1048576 - 64 )); [ "$mb" -gt 0 ] || mb=0
dd if=/dev/zero of=/dev/shm/lab-fill bs=1M count=$mb 2>/dev/null
echo "$mb MiB taken, $(( free / 1048576 - mb )) MiB left"`;
    const taken = await this.exec(c.Id, script);
    return {
      did: `took memory on ${target}: ${taken}`,
      watch: [
        `kubectl get node ${target} -o jsonpath='{.status.conditions[?(@.type=="MemoryPressure")]}' (MemoryPressure=True within a node status report)`,
        `a pod that allocates more now hits the node's memory limit: OOMKilled`,
      ],
      undo: `jetctl lab unfill ${target}`,
    };
  }

  /** Removes what fill-disk and fill-memory wrote. */
  async unfill(target: string): Promise<DrillReport> {
    const c = await this.nodeTarget(target);
    await this.exec(c.Id, 'rm -f /var/lib/jetlet/lab-fill /dev/shm/lab-fill');
    return {
      did: `freed the disk and memory the drills took on ${target}`,
      watch: [`kubectl get node ${target} (pressure conditions back to False)`],
      undo: 'nothing to undo',
    };
  }

  /** Undoes every drill: starts and thaws containers, reconnects partitioned ones, removes fill files. */
  async restore(): Promise<DrillReport> {
    const done: string[] = [];
    for (const c of await this.containers()) {
      const name = this.targetName(c);
      const container = this.docker.getContainer(c.Id);
      if (c.State === 'paused') {
        await container.unpause();
        done.push(`thawed ${name}`);
      } else if (c.State !== 'running') {
        await container.start();
        done.push(`started ${name}`);
      }
      const networks = Object.keys(c.NetworkSettings.Networks);
      if (!networks.includes(this.network)) {
        await this.docker.getNetwork(this.network).connect({ Container: c.Id, EndpointConfig: { Aliases: [c.Labels['com.docker.compose.service'] ?? name] } });
        done.push(`reconnected ${name}`);
      }
      if (this.isNode(c) && c.State === 'running') {
        const freed = await this.exec(c.Id, 'for f in /var/lib/jetlet/lab-fill /dev/shm/lab-fill; do [ ! -e $f ] || { rm -f $f; echo $f; }; done');
        if (freed) done.push(`freed ${freed.split('\n').join(', ')} on ${name}`);
      }
    }
    return { did: done.length > 0 ? done.join('; ') : 'nothing to restore', watch: [WATCH_NODES], undo: 'nothing to undo' };
  }

  private async nodeTarget(target: string): Promise<Docker.ContainerInfo> {
    const c = await this.find(target);
    if (!this.isNode(c)) throw new LabError(`${target} is not a node; fill drills take node-N`);
    if (c.State !== 'running') throw new LabError(`${target} is ${c.State}`);
    return c;
  }

  /** Where the lab's Alertmanager lists its alerts, on the port it is published on; undefined without one. */
  async alertsUrl(): Promise<string | undefined> {
    const alertmanager = (await this.containers()).find((c) => c.Labels['com.docker.compose.service'] === 'alertmanager' && c.State === 'running');
    const port = alertmanager?.Ports.find((p) => p.PrivatePort === 9093 && p.PublicPort)?.PublicPort;
    return port ? `http://127.0.0.1:${port}/api/v2/alerts` : undefined;
  }

  private controlPlaneWatch(target: string): string[] {
    if (target.startsWith('nats-'))
      return [
        'jetctl get pods -o wide (creates and deletes keep working while two of three servers run)',
        `docker-compose logs -f ${target} (the cluster elects new stream leaders; the server catches up when it is back)`,
      ];
    if (target === 'api') return ['jetctl get pods (the API rebuilds its projections from the stream at start and answers again)'];
    if (target.startsWith('scheduler-'))
      return ['jetctl get pods -o wide (the other scheduler binds: it held the kube-scheduler lease, or takes the one this one let go)'];
    return [WATCH_NODES];
  }
}
