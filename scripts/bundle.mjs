// The agent as it ships, built from the compiled `dist/apps/agent/src` after `tsc` (npm run
// build runs both): its code as one CommonJS file, `dist/bundle/agent-code.cjs`, and the file
// that runs it, `dist/bundle/agent.mjs` (apps/agent/src/launch), from V8's code cache.
//
// Node.js 20 resolves, reads and compiles each module file on its own, and the agent with its
// libraries is about 1,400 files: loading them was most of an agent's time from spawn to its
// desired state rebuilt. One file loads in about half the time and holds less: the source is
// kept without comments (all in Latin-1, so V8 stores it a byte per character) and without
// what the agent never uses, named below with the reason. A use of a left-out package fails
// with an error that says so. Function names are kept for stack traces;
// `node --enable-source-maps dist/bundle/agent.mjs` maps them back to the compiled files.
//
// CommonJS rather than an ES module, because Node.js 20 can compile only a script from a code
// cache: the launcher keeps the agent's compiled code once it has started, and the next start
// reads it instead of parsing and compiling the file again. A CommonJS file also holds less
// memory than the same code as an ES module.
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Required at run time, from node_modules, if ever: Nest's transports the agent does not use
 * (Redis, RabbitMQ, MQTT, Kafka, WebSockets), and what Nest's ValidationPipe and file pipes
 * import on first use. The contracts require class-validator's decorators file by file
 * (libs/contracts/src/class-validator.ts), so its index, validator.js and libphonenumber-js
 * stay out.
 */
const external = [
  '@nestjs/websockets',
  '@nestjs/websockets/*',
  'ioredis',
  'amqp-connection-manager',
  'amqplib',
  'mqtt',
  'kafkajs',
  'class-validator',
  'file-type',
  '*.node',
];

/**
 * Packages the agent's libraries require for what the agent never does: dockerode's Docker over
 * `ssh://` (ssh2) and BuildKit build sessions (gRPC, protobuf); and, since every route of the
 * agent is a GET and its HTTP server parses no request body (apps/agent/src/bootstrap.ts),
 * the charset decoders of Express's body parsers (iconv-lite, half a megabyte of code tables)
 * and Nest's file uploads (multer).
 */
const absent = {
  ssh2: 'Docker over ssh:// is not supported by the agent; use a unix:// or tcp:// DOCKER_HOST',
  '@grpc/grpc-js': 'the agent does not build images',
  '@grpc/proto-loader': 'the agent does not build images',
  protobufjs: 'the agent does not build images',
  'iconv-lite': "the agent's HTTP server parses no request body",
  multer: "the agent's HTTP server takes no file upload",
};

const escape = (name) => name.replace(/[/.]/g, '\\$&');

/** @type {import('esbuild').Plugin} */
const leaveOut = {
  name: 'leave-out',
  setup(b) {
    b.onResolve({ filter: new RegExp(`^(${Object.keys(absent).map(escape).join('|')})$`) }, (args) => ({ path: args.path, namespace: 'absent' }));
    // Read at load (`require('ssh2').Client`, `import multer from 'multer'`), so the module and
    // each of its exports is a function that throws when called or constructed.
    b.onLoad({ filter: /.*/, namespace: 'absent' }, (args) => ({
      loader: 'js',
      contents: `const left = () => { throw new Error(${JSON.stringify(`${args.path} is left out of the agent's bundle: ${absent[args.path]}`)}); };
module.exports = new Proxy(function absent() {}, {
  get: (_, key) => (typeof key === 'symbol' || key === '__esModule' || key === 'then' || key === 'prototype' ? undefined : left),
  apply: left,
  construct: left,
});`,
    }));
    // The runtime lib puts dockerode off until first use (libs/runtime/src/dockerode.ts); the agent uses it at once.
    b.onResolve({ filter: /^\.\/dockerode\.js$/ }, (args) =>
      args.importer.includes('/libs/runtime/src/') ? { path: join(args.resolveDir, 'dockerode.bundled.js') } : undefined,
    );
  },
};

/**
 * ICU's locale data is loaded only when a date is formatted by locale. Nest makes its two
 * date formatters when @nestjs/common is imported, which kept about 6 MiB of ICU's data
 * resident in every agent, though the agent's logger writes ISO 8601 times
 * (libs/observability/src/logger.ts) and never formats one. Here each is made on first use
 * instead; a Nest release that makes them otherwise fails the build rather than quietly
 * loading them again.
 */
const formattersOnDemand = {
  name: 'formatters-on-demand',
  setup(b) {
    b.onLoad({ filter: /[\\/]@nestjs[\\/]common[\\/]services[\\/](console-)?logger\.service\.js$/ }, async (args) => {
      const source = await readFile(args.path, 'utf8');
      const made = 'new Intl.DateTimeFormat(';
      const count = source.split(made).length - 1;
      if (count !== 1) throw new Error(`${args.path}: expected one ${made}...) to defer, found ${count}`);
      return {
        loader: 'js',
        contents: `${source.replace(made, 'formatterOnDemand(')}
function formatterOnDemand(locales, options) {
  let formatter;
  return { format: (date) => (formatter ??= new Intl.DateTimeFormat(locales, options)).format(date) };
}
`,
      };
    });
  },
};

/** What the bundles share: Node.js 20, the compiled JavaScript as tsc emitted it, decorator metadata included (not the TypeScript sources that tsconfig.json's paths point at). */
const common = { bundle: true, platform: 'node', target: 'node20', tsconfigRaw: {}, logLevel: 'warning' };

const codeFile = join(root, 'dist/bundle/agent-code.cjs');
// The code caches of the build before: none could be used with this one (apps/agent/src/launch/code-cache.ts).
for (const name of await readdir(dirname(codeFile)).catch(() => [])) if (name.endsWith('.cache')) await rm(join(dirname(codeFile), name), { force: true });

await build({
  ...common,
  entryPoints: [join(root, 'dist/apps/agent/src/bootstrap.js')],
  outfile: codeFile,
  format: 'cjs',
  external,
  plugins: [leaveOut, formattersOnDemand],
  minifyWhitespace: true,
  minifySyntax: true,
  keepNames: true,
  // Each `import()` becomes a `require()`: Node.js 20 runs no `import()` in code compiled from a
  // cache (apps/agent/src/launch/code-cache.ts). Nest loads its optional packages so.
  supported: { 'dynamic-import': false },
  legalComments: 'linked',
  sourcemap: 'linked',
  // Modules that find their packages with createRequire(import.meta.url) get this file's URL.
  define: { 'import.meta.url': '__agentCodeUrl' },
  banner: { js: "const __agentCodeUrl = require('node:url').pathToFileURL(__filename).href;" },
});

// esbuild writes ASCII but for regular expressions (nats.js parses `µs`): escaped here, the
// file is ASCII whole, and the launcher reads it as Latin-1 (see apps/agent/src/launch). A
// `\uXXXX` means the same code unit in a string, a template, an identifier or a pattern.
const code = await readFile(codeFile, 'utf8');
const dynamicImport = /[^\w$.]import\(/.exec(code);
if (dynamicImport)
  throw new Error(`${codeFile}: an import() is left at ${dynamicImport.index}, which would fail whenever the agent starts from its code cache`);
if (/\\[^\0-\x7f]/.test(code)) throw new Error(`${codeFile}: a backslash before a non-ASCII character; escaping it would change its meaning`);
await writeFile(
  codeFile,
  code.replace(/[^\0-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`),
);

await build({
  ...common,
  entryPoints: [join(root, 'dist/apps/agent/src/launch/launch.js')],
  outfile: join(root, 'dist/bundle/agent.mjs'),
  format: 'esm',
});
