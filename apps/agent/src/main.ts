import { setFlagsFromString } from 'node:v8';

// Before anything loads: V8 then sizes the heap for memory rather than speed. An agent is
// idle most of the time, and a node gives its memory to pods; loading the agent's modules
// takes about a third less resident memory this way (the idle-reconcile bench shows both).
setFlagsFromString('--optimize-for-size');
const { runAgent } = await import('./bootstrap.js');
await runAgent();
