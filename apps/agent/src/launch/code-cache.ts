import { randomUUID } from 'node:crypto';
import { isAscii } from 'node:buffer';
import { readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { Script } from 'node:vm';

/** A CommonJS file run with V8's code cache: what it exports, and a way to keep its compiled code for the next start. */
export interface CodeCachedModule {
  readonly exports: unknown;
  /** True when the code came from a cache that V8 accepted. */
  readonly cacheUsed: boolean;
  /**
   * Writes the code compiled so far (every function run until now, so call it once the
   * program has started) beside the file, unless the cache was used. False when nothing was
   * written: the cache was used, or the directory cannot be written (a read-only image).
   */
  saveCache(): boolean;
}

const WRAPPER = '(function (exports, require, module, __filename, __dirname) {\n';

/**
 * Loads `file`, a CommonJS module, as Node's own loader would, but compiled from the code
 * cache kept beside it when there is one. V8 checks a cache only against the source's length
 * and its own version and flags, so the cache's name carries the file's size and modification
 * time: a rebuilt file never meets the code of the one before.
 *
 * The file may not use `import()`. Node.js 20 finds a script's dynamic-import callback by
 * what V8 keeps in the compiled script, and a script compiled from a cache keeps what the
 * process that made the cache had: the same `import()` that works on a first start fails on
 * every later one with ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING. So no callback is given, and
 * `import()` fails alike on every start; the agent's build turns each into `require()`.
 */
export function loadWithCodeCache(file: string): CodeCachedModule {
  // Node.js 20 maps stack traces only of files its own loader compiled: with source maps on
  // (`node --enable-source-maps`), the file is loaded the plain way, and nothing is kept.
  if (process.sourceMapsEnabled) return { exports: createRequire(file)(file) as unknown, cacheUsed: false, saveCache: () => false };
  const { size, mtimeMs } = statSync(file);
  const prefix = `${basename(file)}.`;
  const cacheFile = join(dirname(file), `${prefix}${size}-${Math.trunc(mtimeMs)}.cache`);
  let cachedData: Buffer | undefined;
  try {
    cachedData = readFileSync(cacheFile);
  } catch {
    cachedData = undefined;
  }
  // An ASCII file read as Latin-1 becomes a string outside V8's heap, a byte a character; read as
  // UTF-8, the agent's took about 16 MiB more resident memory.
  const bytes = readFileSync(file);
  const source = isAscii(bytes) ? bytes.toString('latin1') : bytes.toString('utf8');
  // The wrapper on a line of its own, counted as line 0, so stack traces keep the file's lines and columns.
  const script = new Script(`${WRAPPER}${source}\n})`, {
    filename: file,
    lineOffset: -1,
    cachedData,
  });
  const cacheUsed = cachedData !== undefined && script.cachedDataRejected === false;
  const module = { exports: {} as unknown };
  (script.runInThisContext() as (...args: unknown[]) => void)(module.exports, createRequire(file), module, file, dirname(file));
  return {
    get exports() {
      return module.exports;
    },
    cacheUsed,
    saveCache: () => !cacheUsed && writeCache(cacheFile, prefix, script.createCachedData()),
  };
}

/**
 * Writes the cache whole (a start that reads it meanwhile sees the old one or none), and removes
 * those of earlier builds and what a start killed while writing left behind.
 */
function writeCache(cacheFile: string, prefix: string, data: Buffer): boolean {
  const dir = dirname(cacheFile);
  const partial = `${cacheFile}.${randomUUID()}.partial`;
  try {
    writeFileSync(partial, data);
    renameSync(partial, cacheFile);
  } catch {
    rmSync(partial, { force: true });
    return false;
  }
  for (const name of readdirSync(dir)) {
    if (name.startsWith(prefix) && (name.endsWith('.cache') || name.endsWith('.partial')) && join(dir, name) !== cacheFile)
      rmSync(join(dir, name), { force: true });
  }
  return true;
}
