import { IsISO8601, IsObject, IsOptional, IsString, IsUUID, Matches, MaxLength } from '../class-validator.js';
import { DNS1123_LABEL } from '../pod/object-meta.model.js';

/** A namespace was created. Writer: api, on `namespaces.<name>`, with optimistic concurrency. */
export class NamespaceCreatedEvent {
  /** The namespace's name, a DNS-1123 label. */
  @IsString()
  @MaxLength(63)
  @Matches(DNS1123_LABEL, { message: 'name must be a lowercase RFC 1123 label' })
  name: string;

  /** Unique id of this incarnation of the namespace. */
  @IsUUID()
  uid: string;

  /** RFC 3339 creation time. */
  @IsISO8601()
  creationTimestamp: string;

  /** The user's labels (the API adds `kubernetes.io/metadata.name` when it shows them). */
  @IsOptional()
  @IsObject()
  labels?: Record<string, string>;

  @IsOptional()
  @IsObject()
  annotations?: Record<string, string>;
}

/**
 * Deletion of a namespace was requested: it is Terminating, takes no new pods, and the API
 * deletes its pods. Writer: api, on `namespaces.<name>`.
 */
export class NamespaceDeletionRequestedEvent {
  @IsUUID()
  uid: string;

  /** RFC 3339 time of the request. */
  @IsISO8601()
  deletionTimestamp: string;
}

/** The last pod of a terminating namespace is gone: the namespace is removed. Writer: api, on `namespaces.<name>`. */
export class NamespaceRemovedEvent {
  @IsUUID()
  uid: string;
}
