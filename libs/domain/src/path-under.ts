import { isAbsolute, relative, resolve, sep } from 'node:path';

/** A path built from outside data would leave the directory it belongs in. */
export class PathOutsideRootError extends Error {
  override readonly name = 'PathOutsideRootError';
  constructor(
    readonly root: string,
    readonly segments: readonly string[],
  ) {
    super(`path segments ${JSON.stringify(segments)} do not name a place inside ${root}`);
  }
}

/**
 * `root` joined with `segments`, each of which must be one plain path component (not
 * empty, not `.` or `..`, no separator or NUL), and the result strictly inside `root`
 * (never `root` itself). Every path the agent builds from message or label data goes
 * through here, so a forged pod uid of `..` can neither write outside nor remove its root.
 */
export function pathUnder(root: string, ...segments: string[]): string {
  const plain = (s: string): boolean => s !== '' && s !== '.' && s !== '..' && !/[/\\\0]/.test(s);
  if (segments.length === 0 || !segments.every(plain)) throw new PathOutsideRootError(root, segments);
  const base = resolve(root);
  const path = resolve(base, ...segments);
  const rel = relative(base, path);
  if (rel === '' || rel.startsWith(`..${sep}`) || rel === '..' || isAbsolute(rel)) throw new PathOutsideRootError(root, segments);
  return path;
}
