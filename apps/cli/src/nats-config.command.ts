import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { addHollowCredentials, addNodeCredentials, AUTH_FILE, writeNatsConfig } from './nats-config.js';
import { NatsTlsError, TLS_FILE, writeNatsTls } from './nats-tls.js';

/** `jetctl nats-config`, `jetctl node credentials`, `jetctl nats-tls`: NATS identities, permissions and TLS, generated. */
export function isNatsConfigCommand(argv: readonly string[]): boolean {
  return (
    argv[0] === 'nats-config' ||
    argv[0] === 'nats-tls' ||
    (argv[0] === 'node' && argv[1] === 'credentials') ||
    (argv[0] === 'hollow' && argv[1] === 'credentials')
  );
}

function program(write: (text: string) => void): Command {
  const root = new Command('jetctl').exitOverride();
  root
    .command('nats-config')
    .description(`write the NATS server's authorization file (${AUTH_FILE}) and one nkey seed (mode 600) per component and node`)
    .requiredOption('--nodes <names>', 'the node names, comma-separated')
    .requiredOption('--out <dir>', 'where to write them')
    .action((opts: { nodes: string; out: string }) => {
      const nodes = opts.nodes
        .split(',')
        .map((n) => n.trim())
        .filter((n) => n !== '');
      for (const c of writeNatsConfig(opts.out, nodes)) write(`${c.identity}\t${c.nkey}\t${c.seedFile}\n`);
      write(`include ${AUTH_FILE} from the nats-server configuration; give each process NATS_NKEY_SEED_FILE=<its seed>\n`);
    });
  root
    .command('nats-tls')
    .description(`make with openssl a CA, a server certificate for 127.0.0.1, localhost and each --host, and the server's ${TLS_FILE}`)
    .requiredOption('--out <dir>', 'where to write them (an existing CA there is kept)')
    .option('--host <name>', 'another IP address or DNS name the server is reached by (repeatable)', collect, [])
    .option('--verify', 'mutual TLS: also a client certificate, and the server refuses clients without one (verify: true)', false)
    .action((opts: { out: string; host: string[]; verify: boolean }) => {
      const files = writeNatsTls(opts.out, { hosts: opts.host, verify: opts.verify });
      for (const [what, file] of Object.entries(files)) if (file) write(`${what}\t${file}\n`);
      const client = files.clientCertFile ? ` NATS_TLS_CERT_FILE=${files.clientCertFile} NATS_TLS_KEY_FILE=${files.clientKeyFile}` : '';
      write(`include ${TLS_FILE} from the nats-server configuration; give each process and jetctl NATS_TLS_CA_FILE=${files.caFile}${client}\n`);
    });
  root
    .command('node')
    .command('credentials')
    .description(`add one node's seed and write ${AUTH_FILE} again (then reload the server)`)
    .argument('<node>', 'the node name')
    .requiredOption('--dir <dir>', 'the directory jetctl nats-config wrote')
    .action((node: string, opts: { dir: string }) => {
      const c = addNodeCredentials(opts.dir, node);
      write(`node:${node}\t${c.nkey}\t${c.seedFile}\n`);
    });
  root
    .command('hollow')
    .command('credentials')
    .description(`add the seed of one process of hollow nodes <prefix>-<first> ... (allowed what those nodes are, no more) and write ${AUTH_FILE} again`)
    .argument('<prefix>', 'HOLLOW_PREFIX of the process')
    .requiredOption('--count <n>', 'HOLLOW_NODES of the process', positiveInt)
    .option('--first <i>', 'HOLLOW_FIRST_INDEX of the process', nonNegativeInt, 0)
    .requiredOption('--dir <dir>', 'the directory jetctl nats-config wrote')
    .action((prefix: string, opts: { count: number; first: number; dir: string }) => {
      const c = addHollowCredentials(opts.dir, prefix, opts.first, opts.count);
      write(`${c.identity}\t${c.nkey}\t${c.seedFile}\n`);
    });
  return root;
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function nonNegativeInt(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError('not a whole number');
  return Number(value);
}

function positiveInt(value: string): number {
  const n = nonNegativeInt(value);
  if (n < 1) throw new InvalidArgumentError('must be at least 1');
  return n;
}

export async function runNatsConfigCommand(argv: string[], write: (text: string) => void = (t) => process.stdout.write(t)): Promise<number> {
  try {
    await program(write).parseAsync(argv, { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode;
    if (error instanceof NatsTlsError) {
      process.stderr.write(`error: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
}
