// Image references are checked where manifests are validated, in the contracts; the agent uses the same grammar.
export { isValidImageReference } from '#contracts';
