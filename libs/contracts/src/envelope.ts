import { Type } from 'class-transformer';
import { IsDefined, IsIn, IsInt, IsISO8601, IsObject, IsOptional, IsString, Min, MinLength, ValidateNested } from './class-validator.js';
import { MESSAGE_VERSIONS, MESSAGES, type MessageData, type MessageType } from './message-map.js';
import { ContractValidationError, parseContract } from './validation.js';

export const COMPONENTS = ['api', 'scheduler', 'agent', 'jetctl', 'alerter'] as const;
export type Component = (typeof COMPONENTS)[number];

/** Who wrote a message. */
export class MessageSource {
  @IsIn(COMPONENTS)
  component: Component;

  /** The node, for messages written by an agent. */
  @IsOptional()
  @IsString()
  node?: string;
}

/** The envelope around every message on every subject. */
export class EnvelopeContract {
  /** Unique message id, also sent as Nats-Msg-Id so a retried publish is stored once. */
  @IsString()
  @MinLength(1)
  id: string;

  /** Message type, a key of MESSAGES. */
  @IsIn(Object.keys(MESSAGES))
  type: string;

  /** Version of the payload shape. */
  @IsInt()
  @Min(1)
  version: number;

  /** ISO 8601 time the writer created the message. */
  @IsISO8601()
  time: string;

  @IsDefined()
  @ValidateNested()
  @Type(() => MessageSource)
  source: MessageSource;

  /** The pod's uid for everything in a pod's life; the node name for node messages. */
  @IsString()
  @MinLength(1)
  correlationId: string;

  /** The id of the message that caused this one. */
  @IsOptional()
  @IsString()
  causationId?: string;

  /** Validated separately, against the class of (type, version). */
  @IsObject()
  data: object;
}

export interface Envelope<T extends MessageType = MessageType> {
  id: string;
  type: T;
  version: number;
  time: string;
  source: MessageSource;
  correlationId: string;
  causationId?: string;
  data: MessageData<T>;
}

/** Any envelope, narrowed by `type`. */
export type AnyEnvelope = { [T in MessageType]: Envelope<T> }[MessageType];

/**
 * Parses and validates an envelope and its payload. Throws ContractValidationError
 * naming every bad field (payload fields prefixed with `data.`).
 */
export function parseEnvelope(plain: unknown): AnyEnvelope {
  const envelope = parseContract(EnvelopeContract, plain, 'envelope');
  const dataClass = MESSAGE_VERSIONS[`${envelope.type}/v${envelope.version}`];
  if (!dataClass) {
    throw new ContractValidationError('envelope', [
      { field: 'version', reason: 'FieldValueNotSupported', message: `${envelope.type} has no version ${envelope.version}` },
    ]);
  }
  try {
    envelope.data = parseContract(dataClass, envelope.data, envelope.type);
  } catch (error) {
    if (error instanceof ContractValidationError) {
      throw new ContractValidationError(
        envelope.type,
        error.causes.map((c) => ({ ...c, field: c.field ? `data.${c.field}` : 'data' })),
        { cause: error },
      );
    }
    throw error;
  }
  return envelope as unknown as AnyEnvelope;
}

/**
 * Envelopes this process has just validated for a publish, by their exact JSON text. A
 * process that reads its own writes back (the API's projection, the scheduler's bindings)
 * gets each one once from here for the very same bytes instead of validating them a second
 * time. Off (capacity 0) unless a process turns it on; the oldest go first. `null` stands for
 * an envelope its writer built from data it had validated itself (see the bus's
 * `prevalidated`): the reader then only parses the text.
 */
const verified = { capacity: 0, byText: new Map<string, AnyEnvelope | null>() };
const utf8 = new TextDecoder();

/** Keeps up to `capacity` envelopes validated at publish for their first reader (0 turns it off). */
export function reuseVerifiedEnvelopes(capacity: number): void {
  verified.capacity = capacity;
  verified.byText.clear();
}

/**
 * Records that `json` was validated as `envelope` (the publish side's check), or, with `null`,
 * that its writer validated what it was built from; a no-op while reuse is off.
 */
export function rememberVerified(json: string, envelope: AnyEnvelope | null): void {
  if (verified.capacity === 0) return;
  verified.byText.set(json, envelope);
  if (verified.byText.size > verified.capacity) verified.byText.delete(verified.byText.keys().next().value as string);
}

/** Decodes bytes from the bus and parses the envelope; malformed JSON is a validation error too. */
export function decodeEnvelope(bytes: Uint8Array): AnyEnvelope {
  const text = utf8.decode(bytes);
  if (verified.byText.size > 0) {
    const known = verified.byText.get(text);
    if (known !== undefined) {
      verified.byText.delete(text);
      return known ?? (JSON.parse(text) as AnyEnvelope);
    }
  }
  let plain: unknown;
  try {
    plain = JSON.parse(text);
  } catch (error) {
    throw new ContractValidationError('envelope', [{ field: '', reason: 'FieldValueInvalid', message: 'not JSON' }], { cause: error });
  }
  return parseEnvelope(plain);
}
