import { IsArray, IsBoolean, IsIn, IsInt, IsOptional, IsString, Matches, MaxLength, Max, Min } from '../class-validator.js';

/**
 * One mutating request to the API and how it ended, as a Kubernetes audit event at
 * ResponseComplete: who asked, what for, and the answer. Writer: api, on
 * `audit.<resource>.<namespace>.<name>` (`~` for no namespace or name).
 */
export class RequestAuditedEvent {
  /** The authenticated user's name (`system:anonymous` on an API that runs unsecured). */
  @IsString()
  @MaxLength(253)
  user: string;

  /** The user's uid from the token file; empty when it has none. */
  @IsString()
  @MaxLength(253)
  userUid: string;

  /** The user's groups, `system:authenticated` included. */
  @IsArray()
  @IsString({ each: true })
  groups: string[];

  /** The Kubernetes verb: create, update, patch, delete or deletecollection. */
  @IsIn(['create', 'update', 'patch', 'delete', 'deletecollection'])
  verb: string;

  /** The API group; empty for the core group (pods, namespaces, nodes). */
  @IsString()
  @MaxLength(253)
  apiGroup: string;

  /** The resource, such as `pods`. */
  @IsString()
  @Matches(/^[a-z0-9.-]+$/)
  resource: string;

  /** The subresource, such as `eviction` or `status`; empty for the object itself. */
  @IsString()
  @MaxLength(63)
  subresource: string;

  /** The object's namespace; empty for a cluster-scoped object. */
  @IsString()
  @MaxLength(63)
  namespace: string;

  /** The object's name; empty when the request named none and the answer gave none. */
  @IsString()
  @MaxLength(253)
  name: string;

  /** The object's uid, when the answer carried it. */
  @IsOptional()
  @IsString()
  @MaxLength(64)
  objectUid?: string;

  /** The request's path and query, at most 1 KiB of it. */
  @IsString()
  @MaxLength(1024)
  requestURI: string;

  /** The HTTP status of the answer (201, 403, 409...). */
  @IsInt()
  @Min(100)
  @Max(599)
  code: number;

  /** The Status reason of a refused request (Forbidden, Invalid, Conflict...). */
  @IsOptional()
  @IsString()
  @MaxLength(64)
  reason?: string;

  /** True for a `dryRun=All` request: nothing was written. */
  @IsBoolean()
  dryRun: boolean;
}
