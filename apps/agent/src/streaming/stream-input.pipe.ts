import { Injectable, type PipeTransform } from '@nestjs/common';
import type { RawMessage } from '#bus';
import { ContractValidationError, decodeStreamFrame, StreamFrameError, type PodStreamFrame } from '#contracts';

/** A frame from the API on one stream's input subject. */
export interface StreamInput {
  streamId: string;
  frame: PodStreamFrame;
}

/**
 * Reads a frame on `SUBJECTS.streamInput(node, streamId)`: the stream id from the subject's
 * last token (a uuid is its own token), the frame from the bytes. A frame that is not one is a
 * ContractValidationError, so the transport drops, counts and logs it.
 */
@Injectable()
export class StreamInputPipe implements PipeTransform<RawMessage, StreamInput> {
  transform(message: RawMessage): StreamInput {
    const streamId = message.subject.slice(message.subject.lastIndexOf('.') + 1);
    try {
      return { streamId, frame: decodeStreamFrame(message.data) };
    } catch (error) {
      if (!(error instanceof StreamFrameError)) throw error;
      throw new ContractValidationError('stream frame', [{ field: '', reason: 'FieldValueInvalid', message: error.message }], { cause: error });
    }
  }
}
