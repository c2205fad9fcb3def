import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { loadWithCodeCache } from './code-cache.js';

// The agent as it ships: `dist/bundle/agent.mjs`, this file bundled by scripts/bundle.mjs, runs
// the agent's one CommonJS file beside it, `agent-code.cjs`, from V8's code cache.

// Before the agent's code is compiled: V8 then sizes the heap for memory rather than speed (see
// main.ts). The code cache is made and checked under the same flags.
setFlagsFromString('--optimize-for-size');

const agent = loadWithCodeCache(join(dirname(fileURLToPath(import.meta.url)), 'agent-code.cjs'));
await (agent.exports as { runAgent: () => Promise<void> }).runAgent();
// Once it serves, every function of its start has been compiled: kept, the next start skips
// compiling them, and parsing the file. A start that used the cache writes nothing.
agent.saveCache();
