import { DNS1123_SUBDOMAIN, SUBJECTS, type AnyEnvelope, type FieldCause } from '#contracts';
import { podSpecCauses } from './pod-defaults.js';

/** A pod uid as the API assigns it (and static pods derive it): a lowercase UUID. */
export const POD_UID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function nameCauses(field: string, value: string, max: number): FieldCause[] {
  return value.length <= max && DNS1123_SUBDOMAIN.test(value)
    ? []
    : [
        {
          field,
          reason: 'FieldValueInvalid',
          message: `Invalid value: ${JSON.stringify(value)}: must be a lowercase RFC 1123 subdomain of at most ${max} characters`,
        },
      ];
}

/**
 * What an agent checks of an assignment beyond its contract class, so that it trusts the
 * bus no more than the API trusts a client: the API's own spec rules, a uid as the API
 * makes them, and a subject that is the one the scheduler would have used for that pod on
 * this node. Returns every problem; empty when the assignment may be run.
 */
export function assignmentCauses(node: string, subject: string, envelope: AnyEnvelope): FieldCause[] {
  const causes: FieldCause[] = [];
  let uid: unknown;
  if (envelope.type === 'PodAssigned') {
    const { metadata, spec } = envelope.data.pod;
    uid = metadata.uid;
    causes.push(...nameCauses('data.pod.metadata.namespace', metadata.namespace ?? 'default', 63));
    if (spec.nodeName !== node)
      causes.push({ field: 'data.pod.spec.nodeName', reason: 'FieldValueForbidden', message: `assigned to ${String(spec.nodeName)}, not to ${node}` });
    causes.push(...podSpecCauses(envelope.data.pod).map((c) => ({ ...c, field: `data.pod.${c.field}` })));
  } else if (envelope.type === 'PodUnassigned') {
    uid = envelope.data.uid;
    causes.push(...nameCauses('data.namespace', envelope.data.namespace, 63), ...nameCauses('data.name', envelope.data.name, 253));
  } else {
    return [{ field: 'type', reason: 'FieldValueNotSupported', message: `${envelope.type} is not an assignment` }];
  }
  const uidField = envelope.type === 'PodAssigned' ? 'data.pod.metadata.uid' : 'data.uid';
  if (typeof uid !== 'string' || !POD_UID.test(uid)) {
    causes.push({ field: uidField, reason: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(uid)}: must be a lowercase UUID` });
  } else {
    if (subject !== SUBJECTS.assignment(node, uid))
      causes.push({ field: uidField, reason: 'FieldValueInvalid', message: `the subject ${subject} is not the assignment subject of pod ${uid} on ${node}` });
    if (envelope.correlationId !== uid)
      causes.push({ field: 'correlationId', reason: 'FieldValueInvalid', message: `correlationId ${envelope.correlationId} is not the pod's uid ${uid}` });
  }
  return causes;
}
