import { Controller, Get } from '@nestjs/common';

/** The APIGroup document of a group served at version v1 only. */
function apiGroup(name: string): object {
  const v1 = { groupVersion: `${name}/v1`, version: 'v1' };
  return { kind: 'APIGroup', apiVersion: 'v1', name, versions: [v1], preferredVersion: v1 };
}

/** The discovery documents Kubernetes clients (kubectl) read before anything else. */
@Controller()
export class DiscoveryController {
  @Get('version')
  version(): object {
    return {
      major: '1',
      minor: '32',
      gitVersion: 'v1.32.0-jetlet.0.1.0',
      gitCommit: '',
      gitTreeState: '',
      buildDate: '',
      goVersion: '',
      compiler: 'tsc',
      platform: `${process.platform}/${process.arch}`,
    };
  }

  @Get('api')
  api(): object {
    return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [] };
  }

  @Get('apis')
  apis(): object {
    // kubectl top looks for the Metrics API here before it asks for any metrics; kubectl auth can-i for authorization.
    const metrics = { groupVersion: 'metrics.k8s.io/v1beta1', version: 'v1beta1' };
    const authorization = { groupVersion: 'authorization.k8s.io/v1', version: 'v1' };
    const coordination = { groupVersion: 'coordination.k8s.io/v1', version: 'v1' };
    return {
      kind: 'APIGroupList',
      apiVersion: 'v1',
      groups: [
        { name: 'metrics.k8s.io', versions: [metrics], preferredVersion: metrics },
        { name: 'authorization.k8s.io', versions: [authorization], preferredVersion: authorization },
        { name: 'coordination.k8s.io', versions: [coordination], preferredVersion: coordination },
      ],
    };
  }

  @Get('apis/coordination.k8s.io')
  coordinationGroup(): object {
    return apiGroup('coordination.k8s.io');
  }

  /** `kubectl get lease -n kube-system` shows which scheduler leads. */
  @Get('apis/coordination.k8s.io/v1')
  coordinationV1(): object {
    return {
      kind: 'APIResourceList',
      apiVersion: 'v1',
      groupVersion: 'coordination.k8s.io/v1',
      resources: [{ name: 'leases', singularName: 'lease', namespaced: true, kind: 'Lease', verbs: ['get', 'list'] }],
    };
  }

  @Get('apis/authorization.k8s.io')
  authorizationGroup(): object {
    return apiGroup('authorization.k8s.io');
  }

  /** `kubectl auth can-i` posts a SelfSubjectAccessReview. */
  @Get('apis/authorization.k8s.io/v1')
  authorizationV1(): object {
    return {
      kind: 'APIResourceList',
      apiVersion: 'v1',
      groupVersion: 'authorization.k8s.io/v1',
      resources: [
        { name: 'selfsubjectaccessreviews', singularName: 'selfsubjectaccessreview', namespaced: false, kind: 'SelfSubjectAccessReview', verbs: ['create'] },
      ],
    };
  }

  @Get('api/v1')
  v1(): object {
    return {
      kind: 'APIResourceList',
      groupVersion: 'v1',
      resources: [
        {
          name: 'pods',
          singularName: 'pod',
          namespaced: true,
          kind: 'Pod',
          verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
          shortNames: ['po'],
        },
        { name: 'pods/log', singularName: '', namespaced: true, kind: 'Pod', verbs: ['get'] },
        { name: 'pods/exec', singularName: '', namespaced: true, kind: 'PodExecOptions', verbs: ['create', 'get'] },
        { name: 'pods/attach', singularName: '', namespaced: true, kind: 'PodAttachOptions', verbs: ['create', 'get'] },
        { name: 'pods/portforward', singularName: '', namespaced: true, kind: 'PodPortForwardOptions', verbs: ['create', 'get'] },
        { name: 'pods/status', singularName: '', namespaced: true, kind: 'Pod', verbs: ['get', 'patch', 'update'] },
        { name: 'pods/ephemeralcontainers', singularName: '', namespaced: true, kind: 'Pod', verbs: ['get', 'patch', 'update'] },
        // kubectl drain evicts when discovery lists this subresource with its group and version.
        { name: 'pods/eviction', singularName: '', namespaced: true, group: 'policy', version: 'v1', kind: 'Eviction', verbs: ['create'] },
        { name: 'events', singularName: 'event', namespaced: true, kind: 'Event', verbs: ['list', 'watch'], shortNames: ['ev'] },
        { name: 'nodes', singularName: 'node', namespaced: false, kind: 'Node', verbs: ['get', 'list', 'patch', 'watch'], shortNames: ['no'] },
        { name: 'namespaces', singularName: 'namespace', namespaced: false, kind: 'Namespace', verbs: ['create', 'delete', 'get', 'list'], shortNames: ['ns'] },
        { name: 'namespaces/status', singularName: '', namespaced: false, kind: 'Namespace', verbs: ['get'] },
        {
          name: 'configmaps',
          singularName: 'configmap',
          namespaced: true,
          kind: 'ConfigMap',
          verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
          shortNames: ['cm'],
        },
        { name: 'secrets', singularName: 'secret', namespaced: true, kind: 'Secret', verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'] },
        { name: 'nodes/status', singularName: '', namespaced: false, kind: 'Node', verbs: ['get'] },
      ],
    };
  }
}
