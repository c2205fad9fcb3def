import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The users every secured test cluster knows, and what each may do. */
export type TestUser = 'admin' | 'viewer' | 'editor' | 'node';

const EC_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1'];

/** Client certificates every secured test cluster's credentials hold: name, signing CA, subject. */
const CLIENT_CERTIFICATES = [
  // cluster-admin by its O, as kubeadm's admin.conf certificate.
  ['admin', 'client-ca', '/O=system:masters/O=ops/CN=cert-admin'],
  // A user no binding names.
  ['carol', 'client-ca', '/O=developers/CN=carol'],
  // An admin's subject, signed by a CA the API does not trust.
  ['stranger', 'stranger-ca', '/O=system:masters/CN=cert-admin'],
] as const;

export type ClientCertificate = (typeof CLIENT_CERTIFICATES)[number][0];

/**
 * What a secured API is started with: a token file with one random token per test user,
 * role bindings (admin: system:masters; viewer: view everywhere; editor: edit in `team-a`
 * only; node: system:nodes), a self-signed certificate for 127.0.0.1 made with openssl,
 * since kubectl sends credentials only over TLS, and a client CA with client certificates.
 */
export class ApiCredentials {
  readonly tokens: Record<TestUser, string>;
  readonly certificate: string;

  private constructor(readonly dir: string) {
    const token = (): string => randomBytes(24).toString('base64url');
    this.tokens = { admin: token(), viewer: token(), editor: token(), node: token() };
    writeFileSync(
      this.tokenFile,
      [
        `${this.tokens.admin},admin,1000,"system:masters"`,
        `${this.tokens.viewer},viewer,1001,"readers"`,
        `${this.tokens.editor},editor,1002`,
        `${this.tokens.node},system:node:node-1,1003,"system:nodes"`,
      ].join('\n') + '\n',
    );
    writeFileSync(
      this.bindingsFile,
      `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: readers-view}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view}
subjects: [{kind: Group, name: readers}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: editor-edit, namespace: team-a}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: edit}
subjects: [{kind: User, name: editor}]
`,
    );
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '7',
        '-subj',
        '/CN=jetlet-api',
        '-addext',
        'subjectAltName=IP:127.0.0.1,DNS:localhost',
        '-keyout',
        this.keyFile,
        '-out',
        this.certFile,
      ],
      { stdio: 'ignore' },
    );
    this.certificate = readFileSync(this.certFile, 'utf8');
    // Client certificates: a client CA the API trusts, and one it does not.
    for (const ca of ['client-ca', 'stranger-ca']) {
      execFileSync(
        'openssl',
        ['req', '-x509', ...EC_KEY, '-nodes', '-days', '7', '-subj', `/CN=jetlet-${ca}`, '-keyout', this.file(`${ca}.key`), '-out', this.file(`${ca}.crt`)],
        {
          stdio: 'ignore',
        },
      );
    }
    for (const [name, ca, subject] of CLIENT_CERTIFICATES) {
      execFileSync(
        'openssl',
        [
          'req',
          '-x509',
          '-CA',
          this.file(`${ca}.crt`),
          '-CAkey',
          this.file(`${ca}.key`),
          ...EC_KEY,
          '-nodes',
          '-days',
          '7',
          '-subj',
          subject,
          '-addext',
          'extendedKeyUsage=clientAuth',
          '-addext',
          'basicConstraints=critical,CA:FALSE',
          '-keyout',
          this.clientCertificate(name).key,
          '-out',
          this.clientCertificate(name).cert,
        ],
        { stdio: 'ignore' },
      );
    }
  }

  private file(name: string): string {
    return join(this.dir, name);
  }

  /** The API's client CA (API_CLIENT_CA_FILE). */
  get clientCaFile(): string {
    return this.file('client-ca.crt');
  }

  /** The certificate and key files of one of CLIENT_CERTIFICATES. */
  clientCertificate(name: ClientCertificate): { cert: string; key: string } {
    return { cert: this.file(`client-${name}.crt`), key: this.file(`client-${name}.key`) };
  }

  static create(): ApiCredentials {
    return new ApiCredentials(mkdtempSync(join(tmpdir(), 'jetlet-auth-')));
  }

  get tokenFile(): string {
    return join(this.dir, 'tokens.csv');
  }
  get bindingsFile(): string {
    return join(this.dir, 'rbac.yaml');
  }
  get certFile(): string {
    return join(this.dir, 'tls.crt');
  }
  get keyFile(): string {
    return join(this.dir, 'tls.key');
  }

  /** The API's environment: TLS on API_PORT, authenticated plain HTTP on `httpPort`. */
  env(httpPort: number): Record<string, string> {
    return {
      API_TOKEN_AUTH_FILE: this.tokenFile,
      API_AUTHORIZATION_FILE: this.bindingsFile,
      API_TLS_CERT_FILE: this.certFile,
      API_TLS_PRIVATE_KEY_FILE: this.keyFile,
      API_HTTP_PORT: String(httpPort),
      API_CLIENT_CA_FILE: this.clientCaFile,
    };
  }

  /** A kubeconfig for `user` against the HTTPS `server`, trusting the API's certificate. */
  kubeconfig(server: string, user: TestUser): string {
    const ca = Buffer.from(this.certificate).toString('base64');
    return `apiVersion: v1
kind: Config
clusters: [{name: jetlet, cluster: {server: "${server}", certificate-authority-data: ${ca}}}]
users: [{name: ${user}, user: {token: "${this.tokens[user]}"}}]
contexts: [{name: jetlet, context: {cluster: jetlet, user: ${user}}}]
current-context: jetlet
`;
  }

  dispose(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}
