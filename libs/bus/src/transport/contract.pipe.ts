import { Injectable, type PipeTransform } from '@nestjs/common';
import { ContractValidationError, decodeEnvelope, parseContract, subjectNodeMismatch, type AnyEnvelope } from '#contracts';
import { RawMessage } from './raw-message.js';

function raw(value: unknown): RawMessage {
  if (!(value instanceof RawMessage)) throw new TypeError('contract pipes read transport payloads only');
  return value;
}

/**
 * Turns a transport payload into a validated envelope: the envelope, then the payload class
 * of its type and version (unknown fields rejected), then the node its subject names. Throws
 * ContractValidationError listing every bad field; the exception filter terminates it.
 */
@Injectable()
export class ContractPipe implements PipeTransform<RawMessage, AnyEnvelope> {
  transform(value: RawMessage): AnyEnvelope {
    const message = raw(value);
    const envelope = decodeEnvelope(message.data);
    const mismatch = subjectNodeMismatch(message.subject, envelope);
    if (mismatch) throw new ContractValidationError(envelope.type, [{ field: 'data.nodeName', reason: 'FieldValueForbidden', message: mismatch }]);
    message.decoded = envelope;
    return envelope;
  }

  /** A pipe for a plain contract class (no envelope), as core NATS messages carry: `@Payload(ContractPipe.of(LogStreamControl))`. */
  static of<T extends object>(contract: new () => T): PipeTransform<RawMessage, T> {
    return {
      transform: (value: RawMessage): T => {
        const plain = raw(value).json();
        if (plain === undefined) throw new ContractValidationError(contract.name, [{ field: '', reason: 'FieldValueInvalid', message: 'not JSON' }]);
        return parseContract(contract, plain, contract.name);
      },
    };
  }
}
