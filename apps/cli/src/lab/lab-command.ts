import { DEFAULT_LAB_PROJECT, LabDrills, LabError, type DrillReport } from './lab-drills.js';

const LAB_USAGE = `jetctl lab: fault drills on the compose lab (docker-compose.yml). Each prints what to watch and how to undo it.

Usage:
  jetctl lab status                     the lab's containers and their state
  jetctl lab kill TARGET                SIGKILL a node (its engine and pods die with it), a NATS server, the API or a scheduler
  jetctl lab start TARGET               start a killed container again
  jetctl lab restart TARGET             restart the API, a scheduler or a NATS server cleanly
  jetctl lab partition TARGET           cut a node (or any container) from the lab network: no bus, no registry
  jetctl lab heal TARGET                connect it again
  jetctl lab pause TARGET | unpause TARGET   freeze a node's every process, or thaw it
  jetctl lab fill-disk NODE             fill the node's agent file system to 97 % (DiskPressure)
  jetctl lab fill-memory NODE           take the node's memory until under 100 MiB is free (MemoryPressure)
  jetctl lab unfill NODE                free what the fill drills took
  jetctl lab restore                    undo every drill

TARGET: node-N, nats-N, api, scheduler-N, registry.
Flags: --project NAME   the compose project (default $COMPOSE_PROJECT_NAME or ${DEFAULT_LAB_PROJECT})`;

type Drill = (drills: LabDrills, target: string) => Promise<DrillReport>;

const DRILLS: Record<string, Drill> = {
  kill: (d, t) => d.kill(t),
  start: (d, t) => d.start(t),
  restart: (d, t) => d.restart(t),
  partition: (d, t) => d.partition(t),
  heal: (d, t) => d.heal(t),
  pause: (d, t) => d.pause(t),
  unpause: (d, t) => d.unpause(t),
  'fill-disk': (d, t) => d.fillDisk(t),
  'fill-memory': (d, t) => d.fillMemory(t),
  unfill: (d, t) => d.unfill(t),
};

/** `jetctl lab ...`: runs one drill and prints what it did, what to watch and how to undo it. */
export async function runLab(argv: string[], project = process.env.COMPOSE_PROJECT_NAME ?? DEFAULT_LAB_PROJECT): Promise<number> {
  const [drill, target] = argv;
  const drills = new LabDrills(project);
  if (!drill || drill === 'help') {
    console.log(LAB_USAGE);
    return drill ? 0 : 1;
  }
  if (drill === 'status') {
    for (const line of await drills.status()) console.log(line);
    return 0;
  }
  let report: DrillReport;
  if (drill === 'restore') report = await drills.restore();
  else {
    const run = DRILLS[drill];
    if (!run) throw new LabError(`unknown drill "${drill}"\n\n${LAB_USAGE}`);
    if (!target) throw new LabError(`jetctl lab ${drill} needs a TARGET (node-N, nats-N, api, scheduler-N)`);
    report = await run(drills, target);
  }
  console.log(report.did);
  for (const line of report.watch) console.log(`  watch: ${line}`);
  const alerts = await drills.alertsUrl();
  if (alerts) console.log(`  watch: the alerts it raises, in Alertmanager: ${alerts} (or jetctl events -f)`);
  console.log(`  undo:  ${report.undo}`);
  return 0;
}
