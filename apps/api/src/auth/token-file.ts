import { createHash, timingSafeEqual } from 'node:crypto';
import { parse } from 'csv-parse/sync';
import { AUTHENTICATED_GROUP, type UserInfo } from '#domain';

/** A token file that cannot be read as kube-apiserver reads it. */
export class TokenFileError extends Error {
  override readonly name = 'TokenFileError';
}

const digest = (token: string): Buffer => createHash('sha256').update(token).digest();

/**
 * Bearer tokens as kube-apiserver's `--token-auth-file`: a CSV of `token,user,uid` and an
 * optional quoted, comma-separated list of groups. Tokens are kept as SHA-256 digests and
 * compared in constant time, so neither memory nor timing gives one away.
 */
export class TokenAuthenticator {
  private constructor(private readonly users: ReadonlyArray<{ digest: Buffer; user: UserInfo }>) {}

  /** Reads the file's text; throws TokenFileError naming the line of the first bad record. */
  static parse(text: string): TokenAuthenticator {
    let records: string[][];
    try {
      records = parse(text, { relax_column_count: true, trim: true, skip_empty_lines: true, comment: '#' });
    } catch (error) {
      throw new TokenFileError(`token file: ${(error as Error).message}`, { cause: error });
    }
    const seen = new Set<string>();
    const users = records.map((record, i) => {
      const [token = '', name = '', uid = '', groups = ''] = record;
      if (record.length < 3 || !token || !name) throw new TokenFileError(`token file, record ${i + 1}: want token,user,uid[,"group1,group2"]`);
      if (seen.has(token)) throw new TokenFileError(`token file, record ${i + 1}: the token of user "${name}" is given twice`);
      seen.add(token);
      const listed = groups
        .split(',')
        .map((g) => g.trim())
        .filter(Boolean);
      return { digest: digest(token), user: { name, uid, groups: [...new Set([...listed, AUTHENTICATED_GROUP])] } };
    });
    return new TokenAuthenticator(users);
  }

  /** The user whose token this is, or undefined. */
  authenticate(token: string): UserInfo | undefined {
    const wanted = digest(token);
    let found: UserInfo | undefined;
    // Every entry is compared, so the time taken does not say which one matched.
    for (const entry of this.users) if (timingSafeEqual(entry.digest, wanted)) found = entry.user;
    return found;
  }

  get size(): number {
    return this.users.length;
  }
}
