import type { NodeObject, PodSpec, Taint, Toleration } from '#contracts';
import type { PodRecord } from './pod-projection.js';
import { cpuMillis, memoryBytes } from './quantity.js';

/** CPU in millicores and memory in bytes. */
export interface Resources {
  milliCPU: number;
  memory: number;
}

/** One node as the scheduler sees it in a pass: what it offers and what its pods take. */
export interface NodeCandidate {
  name: string;
  labels: Record<string, string>;
  ready: boolean;
  unschedulable: boolean;
  taints: Taint[];
  /** `ephemeralStorage` in bytes; undefined when the node does not report it (nothing is checked against it then). */
  allocatable: Resources & { pods: number; ephemeralStorage?: number };
  /** Sum of the requests of the node's non-terminal pods (what the fit filter checks). */
  requested: Resources;
  /** Sum of their ephemeral-storage requests, in bytes. */
  requestedEphemeralStorage: number;
  /** The same with kube-scheduler's stand-ins for a missing request (what LeastAllocated scores). */
  nonZeroRequested: Resources;
  /** How many non-terminal pods are bound to the node. */
  pods: number;
  /** Host ports taken, as `<protocol>/<port>`. */
  usedPorts: string[];
}

export type Placement = { node: string } | { node?: undefined; message: string };

const MAX_NODE_SCORE = 100;
/** kube-scheduler's stand-ins for a container without a request, so empty pods still spread. */
const DEFAULT_MILLI_CPU_REQUEST = 100;
const DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024;
const DEFAULT_MAX_PODS = 110;
/** kube-scheduler's default plugin weights for the scores used here. */
const WEIGHTS = { leastAllocated: 1, balancedAllocation: 1, taintToleration: 3 } as const;

/** The taint a node carries while it is not Ready (node.kubernetes.io/not-ready:NoSchedule). */
export const NOT_READY_TAINT: Taint = { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' };
/** The taint a cordoned node implies; a pod tolerating it may still go there. */
const UNSCHEDULABLE_TAINT: Taint = { key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' };

/** Kubernetes' reasons, word for word: the message users and tools match on. */
export const REASONS = {
  unschedulable: 'node(s) were unschedulable',
  nodeName: "node(s) didn't match the requested node name",
  untoleratedTaint: (taint: Taint) => `node(s) had untolerated taint {${taint.key}: ${taint.value ?? ''}}`,
  nodeSelector: "node(s) didn't match Pod's node affinity/selector",
  ports: "node(s) didn't have free ports for the requested pod ports",
  tooManyPods: 'Too many pods',
  insufficientCPU: 'Insufficient cpu',
  insufficientMemory: 'Insufficient memory',
  insufficientEphemeralStorage: 'Insufficient ephemeral-storage',
} as const;

/** Whether the toleration matches the taint (core/v1 Toleration.ToleratesTaint). */
export function toleratesTaint(toleration: Toleration, taint: Taint): boolean {
  if (toleration.effect && toleration.effect !== taint.effect) return false;
  if (toleration.key && toleration.key !== taint.key) return false;
  if (toleration.operator === 'Exists') return true;
  return (toleration.value ?? '') === (taint.value ?? '');
}

const tolerated = (tolerations: Toleration[] | undefined, taint: Taint): boolean => (tolerations ?? []).some((t) => toleratesTaint(t, taint));

/** A container's request for one resource; Kubernetes defaults a missing request to its limit. */
function containerRequest(container: PodSpec['containers'][number], resource: 'cpu' | 'memory' | 'ephemeral-storage'): string | undefined {
  return container.resources?.requests?.[resource] ?? container.resources?.limits?.[resource];
}

/** What a pass needs of a pod's spec, derived once per spec object (specs are never changed in place). */
interface PodFacts {
  requests: Resources;
  nonZero: Resources;
  /** The ephemeral-storage request in bytes. */
  ephemeralStorage: number;
  hostPorts: string[];
  /** What the filters read of the spec, as one string (see `fitKey`); made when first asked for. */
  fitKey?: string;
}

const factsOf = new WeakMap<PodSpec, PodFacts>();

function podFacts(spec: PodSpec): PodFacts {
  let facts = factsOf.get(spec);
  if (!facts) {
    facts = {
      requests: sumRequests(spec),
      nonZero: sumNonZeroRequests(spec),
      ephemeralStorage: effectiveRequest(spec, (c) => {
        const storage = containerRequest(c, 'ephemeral-storage');
        return storage === undefined ? 0 : memoryBytes(storage);
      }),
      hostPorts: hostPortsOf(spec),
    };
    factsOf.set(spec, facts);
  }
  return facts;
}

/**
 * Everything kube-scheduler's filters read of a pod (node name, node selector, tolerations,
 * host ports, requests), as one string: two pods with the same key are rejected by the same
 * nodes for the same reasons. A pass that found no node for one such pod need not search
 * again for the next while no binding has changed the nodes.
 */
export function fitKey(spec: PodSpec): string {
  const facts = podFacts(spec);
  facts.fitKey ??= JSON.stringify([
    spec.nodeName ?? null,
    spec.nodeSelector ?? null,
    spec.tolerations ?? null,
    facts.hostPorts,
    facts.requests,
    facts.ephemeralStorage,
  ]);
  return facts.fitKey;
}

/** What the pod requests: the sum over its containers, init containers counted as Kubernetes counts them. */
export function podRequests(spec: PodSpec): Resources {
  return podFacts(spec).requests;
}

/** The pod's ephemeral-storage request in bytes, summed as podRequests sums cpu and memory. */
export function podEphemeralStorageRequest(spec: PodSpec): number {
  return podFacts(spec).ephemeralStorage;
}

/**
 * Kubernetes' PodRequests over per-container requests: the containers and sidecars together,
 * or the largest init container with the sidecars started before it, whichever is more.
 */
function effectiveRequests(spec: PodSpec, of: (c: PodSpec['containers'][number]) => Resources): Resources {
  const add = (a: Resources, b: Resources): Resources => ({ milliCPU: a.milliCPU + b.milliCPU, memory: a.memory + b.memory });
  const max = (a: Resources, b: Resources): Resources => ({ milliCPU: Math.max(a.milliCPU, b.milliCPU), memory: Math.max(a.memory, b.memory) });
  let total = spec.containers.map(of).reduce(add, { milliCPU: 0, memory: 0 });
  let sidecars: Resources = { milliCPU: 0, memory: 0 };
  let init: Resources = { milliCPU: 0, memory: 0 };
  for (const c of spec.initContainers ?? []) {
    const own = of(c);
    if (c.restartPolicy === 'Always') {
      total = add(total, own);
      sidecars = add(sidecars, own);
      init = max(init, sidecars);
    } else init = max(init, add(own, sidecars));
  }
  return max(total, init);
}

/** effectiveRequests for one resource counted in bytes (ephemeral-storage), carried in the memory slot. */
function effectiveRequest(spec: PodSpec, of: (c: PodSpec['containers'][number]) => number): number {
  return effectiveRequests(spec, (c) => ({ milliCPU: 0, memory: of(c) })).memory;
}

function sumRequests(spec: PodSpec): Resources {
  return effectiveRequests(spec, (c) => {
    const cpu = containerRequest(c, 'cpu');
    const mem = containerRequest(c, 'memory');
    return { milliCPU: cpu === undefined ? 0 : cpuMillis(cpu), memory: mem === undefined ? 0 : memoryBytes(mem) };
  });
}

/** The pod's requests with kube-scheduler's stand-ins for a missing (or zero) cpu or memory request. */
export function podNonZeroRequests(spec: PodSpec): Resources {
  return podFacts(spec).nonZero;
}

function sumNonZeroRequests(spec: PodSpec): Resources {
  return effectiveRequests(spec, (c) => {
    const cpu = containerRequest(c, 'cpu');
    const mem = containerRequest(c, 'memory');
    return {
      milliCPU: cpu === undefined || cpuMillis(cpu) === 0 ? DEFAULT_MILLI_CPU_REQUEST : cpuMillis(cpu),
      memory: mem === undefined || memoryBytes(mem) === 0 ? DEFAULT_MEMORY_REQUEST : memoryBytes(mem),
    };
  });
}

/** The host ports the pod asks for, as `<protocol>/<port>` (every host IP counts as 0.0.0.0). */
export function podHostPorts(spec: PodSpec): string[] {
  return podFacts(spec).hostPorts;
}

function hostPortsOf(spec: PodSpec): string[] {
  return spec.containers.flatMap((c) => (c.ports ?? []).filter((p) => p.hostPort).map((p) => `${p.protocol ?? 'TCP'}/${p.hostPort}`));
}

/** Succeeded and Failed pods, and removed ones, take no room on their node. */
export function isPodTerminal(record: PodRecord): boolean {
  return record.removed || record.status?.phase === 'Succeeded' || record.status?.phase === 'Failed';
}

/** The candidate for a node with nothing on it yet. */
export function emptyCandidate(node: NodeObject, ready: boolean): NodeCandidate {
  const allocatable = node.status.allocatable;
  return {
    name: node.metadata.name,
    labels: node.metadata.labels,
    ready,
    unschedulable: node.spec.unschedulable ?? false,
    taints: node.spec.taints ?? [],
    allocatable: {
      milliCPU: allocatable.cpu === undefined ? 0 : cpuMillis(allocatable.cpu),
      memory: allocatable.memory === undefined ? 0 : memoryBytes(allocatable.memory),
      pods: allocatable.pods === undefined ? DEFAULT_MAX_PODS : Number(allocatable.pods),
      ...(allocatable['ephemeral-storage'] === undefined ? {} : { ephemeralStorage: memoryBytes(allocatable['ephemeral-storage']) }),
    },
    requested: { milliCPU: 0, memory: 0 },
    requestedEphemeralStorage: 0,
    nonZeroRequested: { milliCPU: 0, memory: 0 },
    pods: 0,
    usedPorts: [],
  };
}

/** The candidate with one more pod on it. Pure: the input is left as it was. */
export function withPod(candidate: NodeCandidate, spec: PodSpec): NodeCandidate {
  const requests = podRequests(spec);
  const nonZero = podNonZeroRequests(spec);
  return {
    ...candidate,
    requested: { milliCPU: candidate.requested.milliCPU + requests.milliCPU, memory: candidate.requested.memory + requests.memory },
    requestedEphemeralStorage: candidate.requestedEphemeralStorage + podEphemeralStorageRequest(spec),
    nonZeroRequested: {
      milliCPU: candidate.nonZeroRequested.milliCPU + nonZero.milliCPU,
      memory: candidate.nonZeroRequested.memory + nonZero.memory,
    },
    pods: candidate.pods + 1,
    usedPorts: [...candidate.usedPorts, ...podHostPorts(spec)],
  };
}

/** One candidate per node, with the requests and host ports of the non-terminal pods bound to it. */
export function buildCandidates(nodes: Array<{ node: NodeObject; ready: boolean }>, pods: PodRecord[]): NodeCandidate[] {
  const byName = new Map(nodes.map(({ node, ready }) => [node.metadata.name, emptyCandidate(node, ready)]));
  // The candidates are this function's own fresh objects: summed in place, not copied per pod.
  for (const pod of pods) {
    const candidate = pod.nodeName === undefined ? undefined : byName.get(pod.nodeName);
    if (!candidate || isPodTerminal(pod)) continue;
    const { requests, nonZero, ephemeralStorage, hostPorts } = podFacts(pod.manifest.spec);
    candidate.requested.milliCPU += requests.milliCPU;
    candidate.requested.memory += requests.memory;
    candidate.requestedEphemeralStorage += ephemeralStorage;
    candidate.nonZeroRequested.milliCPU += nonZero.milliCPU;
    candidate.nonZeroRequested.memory += nonZero.memory;
    candidate.pods++;
    for (const port of hostPorts) candidate.usedPorts.push(port);
  }
  return [...byName.values()];
}

/**
 * kube-scheduler's filters, in its order (NodeUnschedulable, NodeName, TaintToleration,
 * NodeAffinity, NodePorts, NodeResourcesFit): the reasons the node cannot take the pod, or
 * none. A node is rejected by its first failing filter; the fit filter names every resource short.
 */
export function filterReasons(spec: PodSpec, node: NodeCandidate): string[] {
  return filterWith(spec, podFacts(spec), node);
}

function filterWith(spec: PodSpec, pod: PodFacts, node: NodeCandidate): string[] {
  if (node.unschedulable && !tolerated(spec.tolerations, UNSCHEDULABLE_TAINT)) return [REASONS.unschedulable];
  if (spec.nodeName !== undefined && spec.nodeName !== node.name) return [REASONS.nodeName];
  // A node that is not Ready carries the not-ready taint, as the node lifecycle controller sets it.
  const taints = node.ready ? node.taints : [NOT_READY_TAINT, ...node.taints];
  const untolerated = taints.length === 0 ? undefined : taints.find((t) => t.effect !== 'PreferNoSchedule' && !tolerated(spec.tolerations, t));
  if (untolerated) return [REASONS.untoleratedTaint(untolerated)];
  if (spec.nodeSelector && !Object.entries(spec.nodeSelector).every(([k, v]) => node.labels[k] === v)) return [REASONS.nodeSelector];
  if (pod.hostPorts.length > 0 && pod.hostPorts.some((p) => node.usedPorts.includes(p))) return [REASONS.ports];
  const reasons: string[] = [];
  if (node.pods + 1 > node.allocatable.pods) reasons.push(REASONS.tooManyPods);
  const requests = pod.requests;
  if (requests.milliCPU > 0 && requests.milliCPU > node.allocatable.milliCPU - node.requested.milliCPU) reasons.push(REASONS.insufficientCPU);
  if (requests.memory > 0 && requests.memory > node.allocatable.memory - node.requested.memory) reasons.push(REASONS.insufficientMemory);
  // A node that does not report ephemeral-storage (an agent from before it did) cannot enforce it either: not checked.
  const storage = node.allocatable.ephemeralStorage;
  if (pod.ephemeralStorage > 0 && storage !== undefined && pod.ephemeralStorage > storage - node.requestedEphemeralStorage)
    reasons.push(REASONS.insufficientEphemeralStorage);
  return reasons;
}

function leastRequestedScore(requested: number, capacity: number): number {
  if (capacity === 0 || requested > capacity) return 0;
  return Math.floor(((capacity - requested) * MAX_NODE_SCORE) / capacity);
}

/** NodeResourcesFit's LeastAllocated score (cpu and memory, weight 1 each), 0–100: the emptier the higher. */
export function leastAllocatedScore(spec: PodSpec, node: NodeCandidate): number {
  return leastAllocatedOf(podNonZeroRequests(spec), node);
}

/** leastAllocatedScore for a pod's non-zero requests: the mean of the scored resources' scores, floored. */
function leastAllocatedOf(pod: Resources, node: NodeCandidate): number {
  let sum = 0;
  let scored = 0;
  if (node.allocatable.milliCPU > 0) {
    sum += leastRequestedScore(node.nonZeroRequested.milliCPU + pod.milliCPU, node.allocatable.milliCPU);
    scored++;
  }
  if (node.allocatable.memory > 0) {
    sum += leastRequestedScore(node.nonZeroRequested.memory + pod.memory, node.allocatable.memory);
    scored++;
  }
  return scored === 0 ? 0 : Math.floor(sum / scored);
}

/**
 * NodeResourcesBalancedAllocation's score, 0–100: the closer the node's cpu and memory
 * fractions after placing the pod, the higher. A pod requesting nothing is not scored (0 everywhere).
 */
export function balancedAllocationScore(spec: PodSpec, node: NodeCandidate): number {
  return balancedAllocationOf(podRequests(spec), node);
}

/** balancedAllocationScore for a pod's requests: with both resources scored, half the gap between their fractions. */
function balancedAllocationOf(pod: Resources, node: NodeCandidate): number {
  if (pod.milliCPU === 0 && pod.memory === 0) return 0;
  if (!(node.allocatable.milliCPU > 0 && node.allocatable.memory > 0)) return MAX_NODE_SCORE;
  const cpu = Math.min(1, (node.requested.milliCPU + pod.milliCPU) / node.allocatable.milliCPU);
  const memory = Math.min(1, (node.requested.memory + pod.memory) / node.allocatable.memory);
  return Math.trunc((1 - Math.abs((cpu - memory) / 2)) * MAX_NODE_SCORE);
}

/** The PreferNoSchedule taints the pod does not tolerate count against the node (TaintToleration's score). */
function intolerablePreferNoSchedule(spec: PodSpec, node: NodeCandidate): number {
  return node.taints.filter((t) => t.effect === 'PreferNoSchedule' && !tolerated(spec.tolerations, t)).length;
}

/**
 * kube-scheduler's FitError message: each reason counted over the nodes, "count reason"
 * strings sorted, so the message does not depend on node order.
 */
export function unschedulableMessage(nodeCount: number, reasons: string[][]): string {
  const counts = new Map<string, number>();
  for (const reason of reasons.flat()) counts.set(reason, (counts.get(reason) ?? 0) + 1);
  const detail = [...counts]
    .map(([reason, count]) => `${count} ${reason}`)
    .sort()
    .join(', ');
  return `0/${nodeCount} nodes are available${detail ? `: ${detail}` : ''}.`;
}

/** One feasible node's score, by plugin (weights applied) and in total. */
export interface NodeScore {
  name: string;
  leastAllocated: number;
  balancedAllocation: number;
  taintToleration: number;
  total: number;
}

/**
 * Scores feasible nodes as kube-scheduler does with its default plugins: LeastAllocated
 * and BalancedAllocation with equal weights, and TaintToleration with its weight of 3
 * (fewer untolerated PreferNoSchedule taints score higher). Best first; a tie goes to the
 * first name, so the order is deterministic.
 */
export function scoreNodes(spec: PodSpec, feasible: NodeCandidate[]): NodeScore[] {
  return scoreAll(spec, feasible).sort((a, b) => b.total - a.total || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

function scoreAll(spec: PodSpec, feasible: NodeCandidate[]): NodeScore[] {
  const taintCounts = feasible.map((n) => intolerablePreferNoSchedule(spec, n));
  const maxTaints = Math.max(...taintCounts);
  return feasible.map((node, i) => {
    const leastAllocated = WEIGHTS.leastAllocated * leastAllocatedScore(spec, node);
    const balancedAllocation = WEIGHTS.balancedAllocation * balancedAllocationScore(spec, node);
    // TaintToleration's NormalizeScore (reversed): no untolerated PreferNoSchedule taint scores 100.
    const taintToleration =
      WEIGHTS.taintToleration * (maxTaints === 0 ? MAX_NODE_SCORE : MAX_NODE_SCORE - Math.floor((taintCounts[i] * MAX_NODE_SCORE) / maxTaints));
    return { name: node.name, leastAllocated, balancedAllocation, taintToleration, total: leastAllocated + balancedAllocation + taintToleration };
  });
}

/** kube-scheduler's floor: at least this many feasible nodes are looked for, however many there are. */
export const MIN_FEASIBLE_NODES_TO_FIND = 100;

/**
 * How many feasible nodes to find before scoring (kube-scheduler's `numFeasibleNodesToFind`):
 * every node up to 100; then `percentage` of them, or when it is 0 the adaptive share
 * `50 - nodes/125` (at least 5 %), and never fewer than 100.
 */
export function feasibleNodesToFind(nodeCount: number, percentage = 0): number {
  if (nodeCount < MIN_FEASIBLE_NODES_TO_FIND || percentage >= 100) return nodeCount;
  const share = percentage > 0 ? percentage : Math.max(5, 50 - nodeCount / 125);
  return Math.max(MIN_FEASIBLE_NODES_TO_FIND, Math.floor((nodeCount * share) / 100));
}

export interface ScheduleOptions {
  /** Where the search starts in `candidates`; the next pod's search starts where this one stopped (`Placement.nextStart`). */
  start?: number;
  /** kube-scheduler's `percentageOfNodesToScore` (0: adaptive). Without it every node is filtered and scored. */
  percentageOfNodesToScore?: number;
}

/**
 * Picks the node for a pod as kube-scheduler does with its default plugins: filter, then
 * score (`scoreNodes`); the highest score wins, so the choice is deterministic. Every node
 * is filtered and scored (`searchNodes` samples them, as a scheduler at scale does).
 */
export function schedule(spec: PodSpec, candidates: NodeCandidate[]): Placement {
  const { nextStart: _next, ...placement } = searchNodes(spec, candidates);
  return placement;
}

/**
 * `schedule` over a sample of the nodes: with `percentageOfNodesToScore`, the filter stops once that many feasible nodes are found,
 * searching round-robin from `start` so every node gets its turn; a pod that fits nowhere
 * has still been checked against every node, so its message counts them all.
 */
export function searchNodes(spec: PodSpec, candidates: NodeCandidate[], options: ScheduleOptions = {}): Placement & { nextStart: number } {
  const facts = podFacts(spec);
  const total = candidates.length;
  const wanted = options.percentageOfNodesToScore === undefined ? total : feasibleNodesToFind(total, options.percentageOfNodesToScore);
  const start = total === 0 ? 0 : (options.start ?? 0) % total;
  const rejected: string[][] = [];
  const feasible: NodeCandidate[] = [];
  let looked = 0;
  while (looked < total && feasible.length < wanted) {
    const node = candidates[(start + looked) % total];
    looked++;
    const reasons = filterWith(spec, facts, node);
    if (reasons.length > 0) rejected.push(reasons);
    else feasible.push(node);
  }
  const nextStart = total === 0 ? 0 : (start + looked) % total;
  if (feasible.length === 0) return { message: unschedulableMessage(total, rejected), nextStart };
  return { node: bestNode(spec, facts, feasible), nextStart };
}

/**
 * The name `scoreNodes` would rank first, scored as `scoreAll` scores (the same sums, in the
 * same order) without sorting, and without an object per node: with 1,000 nodes a pod's
 * search scores hundreds, for every pod bound.
 */
function bestNode(spec: PodSpec, facts: PodFacts, feasible: NodeCandidate[]): string {
  // TaintToleration's counts, kept only when some feasible node has an untolerated PreferNoSchedule taint.
  let taintCounts: number[] | undefined;
  let maxTaints = 0;
  for (let i = 0; i < feasible.length; i++) {
    if (feasible[i].taints.length === 0) continue;
    const count = intolerablePreferNoSchedule(spec, feasible[i]);
    if (count === 0) continue;
    taintCounts ??= new Array<number>(feasible.length).fill(0);
    taintCounts[i] = count;
    maxTaints = Math.max(maxTaints, count);
  }
  let best = '';
  let bestTotal = -Infinity;
  for (let i = 0; i < feasible.length; i++) {
    const node = feasible[i];
    const leastAllocated = WEIGHTS.leastAllocated * leastAllocatedOf(facts.nonZero, node);
    const balancedAllocation = WEIGHTS.balancedAllocation * balancedAllocationOf(facts.requests, node);
    const taintToleration =
      WEIGHTS.taintToleration * (maxTaints === 0 ? MAX_NODE_SCORE : MAX_NODE_SCORE - Math.floor(((taintCounts?.[i] ?? 0) * MAX_NODE_SCORE) / maxTaints));
    const total = leastAllocated + balancedAllocation + taintToleration;
    if (i === 0 || total > bestTotal || (total === bestTotal && node.name < best)) {
      best = node.name;
      bestTotal = total;
    }
  }
  return best;
}
