import { ValidateBy, type ValidationOptions } from '../class-validator.js';

/**
 * Docker's reference grammar (distribution/reference): [host[:port]/]path[:tag][@digest],
 * path components lowercase. The kubelet answers InvalidImageName for anything else.
 */
const COMPONENT = '[a-z0-9]+(?:(?:[._]|__|[-]*)[a-z0-9]+)*';
const HOST = '(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)(?:\\.(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?))*(?::[0-9]+)?';
const REFERENCE = new RegExp(
  `^(?:${HOST}/)?${COMPONENT}(?:/${COMPONENT})*(?::[\\w][\\w.-]{0,127})?(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})?$`,
);

/** An image id: what a 64-hex repository name would be read as, so Docker refuses it as a name. */
const IMAGE_ID = /^[a-f0-9]{64}$/;
/** A digest whose algorithm Docker knows must have that algorithm's length. */
const KNOWN_DIGEST = /@sha256:(?![a-fA-F0-9]{64}$)/;

export function isValidImageReference(image: string): boolean {
  if (image.length > 255 || !REFERENCE.test(image) || KNOWN_DIGEST.test(image)) return false;
  const name = image.split('@')[0]?.replace(/:[\w][\w.-]{0,127}$/, '') ?? '';
  return !IMAGE_ID.test(name.slice(name.lastIndexOf('/') + 1)) || name.includes('/');
}

/** An image reference Docker can parse; Kubernetes' kubelet would answer InvalidImageName for anything else. */
export function IsImageReference(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isImageReference',
      validator: {
        validate: (value: unknown) => typeof value === 'string' && isValidImageReference(value),
        defaultMessage: (args) =>
          `Invalid value: ${JSON.stringify(args?.value)}: must be an image reference Docker can parse: [host[:port]/]path[:tag][@digest], path lowercase, at most 255 characters`,
      },
    },
    options,
  );
}
