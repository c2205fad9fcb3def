import { createRequire } from 'node:module';
import type Docker from 'dockerode';

/**
 * dockerode, required by the first DockerRuntime rather than with the runtime lib: it brings
 * ssh2, whose WebAssembly poly1305 reserves 16 MiB at load, into every process that imports
 * the lib, a hollow node's process (FakeRuntime only) included. The agent's bundle replaces
 * this module with `dockerode.bundled.ts` (see scripts/bundle.mjs).
 */
let dockerode: typeof Docker | undefined;
export const loadDockerode = (): typeof Docker => (dockerode ??= createRequire(import.meta.url)('dockerode') as typeof Docker);
