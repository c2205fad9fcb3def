import { Type } from 'class-transformer';
import { Equals, IsIn, IsInt, IsOptional, IsString, IsUUID, Matches, Min, ValidateNested } from '../class-validator.js';
import { DNS1123_LABEL, DNS1123_SUBDOMAIN } from '../pod/object-meta.model.js';
import { PodLogOptions } from './pod-log-options.model.js';

/**
 * The log protocol between the API and a node's agent, on core NATS (nothing is stored):
 *
 * 1. The API subscribes to a fresh inbox and publishes a LogRequest on
 *    `SUBJECTS.logRequests(node)` with that inbox as the reply subject.
 * 2. The agent answers on the inbox with LogStreamMessages: first `start` or `error`
 *    (the request failed; `error` carries the HTTP status), then `data` chunks numbered
 *    1, 2, 3..., `heartbeat`s while nothing else is sent, and finally `end` (with `error`
 *    when the runtime failed mid-stream).
 * 3. The API sends LogStreamControl on `SUBJECTS.logStreamControl(node, streamId)`: `ack`
 *    with how many chunks its HTTP client has taken, at least every `keepAliveMs`, and
 *    `cancel` when its client goes away.
 *
 * The agent sends at most `windowChunks` chunks beyond the last ack, so a slow HTTP client
 * slows the container's log read instead of filling the API's memory. Either side ends the
 * stream when it has heard nothing from the other for `timeoutMs`: an API that died cannot
 * leave a follow running on the node, and an agent that died cannot leave an HTTP response open.
 */
export const LOG_STREAM = {
  /** Chunks the agent may send beyond the API's last ack. */
  windowChunks: 64,
  /** Largest chunk, in characters (well under NATS' 1 MiB payload limit even when JSON-escaped). */
  chunkChars: 32 * 1024,
  /** How often each side speaks while it has nothing else to say. */
  keepAliveMs: 5_000,
  /** Silence after which a side gives the stream up. */
  timeoutMs: 15_000,
  /** How long the API waits for the agent's first answer. */
  answerTimeoutMs: 10_000,
} as const;

/**
 * A request for one container's log. Writer: the API, to the agent of the pod's node; the
 * reply subject of the NATS message is where the agent sends the LogStreamMessages.
 */
export class LogRequest extends PodLogOptions {
  @Equals(1, { message: 'version must be 1' })
  version: 1;

  /** Names this stream in every message about it, both ways. */
  @IsUUID()
  streamId: string;

  @Matches(DNS1123_LABEL, { message: 'namespace must be an RFC 1123 label' })
  namespace: string;

  @Matches(DNS1123_SUBDOMAIN, { message: 'name must be an RFC 1123 subdomain' })
  name: string;

  /** The pod incarnation the API means; a pod of the same name with another uid is not it. */
  @IsOptional()
  @IsUUID()
  uid?: string;
}

/** Why a log request failed, as the HTTP answer the API turns it into. */
export class LogStreamError {
  /** HTTP status: 400 for what the request asks that cannot be served, 404 for an unknown pod, 500 for runtime failures. */
  @IsInt()
  code: number;

  /** Kubernetes Status reason: BadRequest, NotFound, InternalError. */
  @IsString()
  reason: string;

  @IsString()
  message: string;
}

export const LOG_STREAM_KINDS = ['start', 'data', 'heartbeat', 'end', 'error'] as const;
export type LogStreamKind = (typeof LOG_STREAM_KINDS)[number];

/** One message of a log stream. Writer: the agent, to the reply subject of the LogRequest. */
export class LogStreamMessage {
  @Equals(1, { message: 'version must be 1' })
  version: 1;

  @IsUUID()
  streamId: string;

  /** Number of a `data` chunk (from 1); on the other kinds, the number of the last chunk sent. */
  @IsInt()
  @Min(0)
  seq: number;

  @IsIn(LOG_STREAM_KINDS)
  kind: LogStreamKind;

  /** The text of a `data` chunk: stdout and stderr interleaved, UTF-8. */
  @IsOptional()
  @IsString()
  data?: string;

  /** On `error`: why the request failed. On `end`: why the stream broke off, if it did. */
  @IsOptional()
  @ValidateNested()
  @Type(() => LogStreamError)
  error?: LogStreamError;
}

export const LOG_STREAM_CONTROL_KINDS = ['ack', 'cancel'] as const;
export type LogStreamControlKind = (typeof LOG_STREAM_CONTROL_KINDS)[number];

/** Flow control and keep-alive of one log stream. Writer: the API, on `SUBJECTS.logStreamControl(node, streamId)`. */
export class LogStreamControl {
  @Equals(1, { message: 'version must be 1' })
  version: 1;

  @IsUUID()
  streamId: string;

  @IsIn(LOG_STREAM_CONTROL_KINDS)
  kind: LogStreamControlKind;

  /** Chunks the API's HTTP client has taken so far (the highest `seq` delivered). */
  @IsInt()
  @Min(0)
  delivered: number;
}
