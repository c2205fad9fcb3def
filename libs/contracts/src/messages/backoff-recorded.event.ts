import { IsBoolean, IsIn, IsInt, IsISO8601, IsOptional, IsString, IsUUID, Min, MinLength } from '../class-validator.js';

export const BACKOFF_KINDS = ['CrashLoop', 'ImagePull'] as const;
export type BackoffKind = (typeof BACKOFF_KINDS)[number];

/**
 * The agent's back-off book changed for one container: the input of its next restart or
 * pull decision, which otherwise lives only in the agent's memory. Writer: the agent of
 * `nodeName`, on `events.<node>.<uid>`, each time it records a failure in its back-off
 * (a crash restart it starts, a failed pull).
 */
export class BackoffRecordedEvent {
  @IsUUID()
  uid: string;

  @IsString()
  namespace: string;

  @IsString()
  name: string;

  @IsString()
  @MinLength(1)
  nodeName: string;

  /** The container's name in the pod spec. */
  @IsString()
  @MinLength(1)
  containerName: string;

  /**
   * CrashLoop: the container is being restarted after a death, and a next death waits
   * `delayMs` after it before the next start. ImagePull: a pull failed, and the next pull of
   * `image` for this pod waits `delayMs` after `recordedAt`.
   */
  @IsIn(BACKOFF_KINDS)
  kind: BackoffKind;

  /** The image, for ImagePull. */
  @IsOptional()
  @IsString()
  image?: string;

  /** ISO 8601 time of the failure: the container's death (CrashLoop) or the failed pull (ImagePull). */
  @IsISO8601()
  failedAt: string;

  /** ISO 8601 time the agent recorded it: when it started the restart, or when the pull failed. */
  @IsISO8601()
  recordedAt: string;

  /** The back-off delay now in force, in milliseconds (the kubelet's 10 s doubling to 300 s, or the agent's settings). */
  @IsInt()
  @Min(0)
  delayMs: number;

  /** The agent's back-off policy: the first delay, in milliseconds (BACKOFF_BASE_SECONDS). */
  @IsInt()
  @Min(0)
  baseMs: number;

  /** The agent's back-off policy: the longest delay, in milliseconds (BACKOFF_CAP_SECONDS); a book untouched for twice this starts again. */
  @IsInt()
  @Min(0)
  capMs: number;

  /** CrashLoop: the attempt being started (the container's restartCount once it runs). */
  @IsOptional()
  @IsInt()
  @Min(0)
  restartCount?: number;

  /** CrashLoop: the container's spec changed, so its back-off started afresh. */
  @IsOptional()
  @IsBoolean()
  fresh?: boolean;
}
