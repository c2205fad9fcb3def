import { IsIn, IsInt, IsIP, IsNumber, IsOptional, IsString, Max, Min } from '#contracts/class-validator';
import { BusConfig } from '#contracts';

/** The API's configuration, from environment variables of the same names. */
export class ApiConfig extends BusConfig {
  @IsInt()
  @Min(0)
  @Max(65535)
  API_PORT: number = 8001;

  /** Loopback unless configured. */
  @IsIP()
  API_ADDRESS: string = '127.0.0.1';

  /** A node without a heartbeat for this long shows Ready=Unknown. */
  @IsNumber()
  @Min(1)
  NODE_GRACE_SECONDS: number = 40;

  /** How long a write waits for JetStream to acknowledge it before answering 503. */
  @IsNumber()
  @Min(0.1)
  BUS_TIMEOUT_SECONDS: number = 2;

  /** How long a write waits for its own fact to reach the API's projection. */
  @IsNumber()
  @Min(0.1)
  WRITE_TIMEOUT_SECONDS: number = 10;

  /** How many recent changes of each resource the watch cache keeps; a watch from an older resourceVersion gets 410 Expired. */
  @IsInt()
  @Min(10)
  WATCH_CACHE_SIZE: number = 50_000;

  /** How often an idle watch with allowWatchBookmarks gets a BOOKMARK. */
  @IsNumber()
  @Min(0.1)
  WATCH_BOOKMARK_SECONDS: number = 60;

  /** Serve HTTPS with this certificate (PEM) and API_TLS_PRIVATE_KEY_FILE: kubectl sends credentials only over TLS. */
  @IsOptional()
  @IsString()
  API_TLS_CERT_FILE?: string;

  @IsOptional()
  @IsString()
  API_TLS_PRIVATE_KEY_FILE?: string;

  /** With TLS on API_PORT, also plain HTTP on this port (of API_ADDRESS), authenticated alike, for tools that cannot check the certificate. */
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(65535)
  API_HTTP_PORT?: number;

  /**
   * Client certificates signed by these CAs (PEM) authenticate on the HTTPS port, as
   * kube-apiserver's `--client-ca-file`: the user is the certificate's CN, its groups the O
   * fields. Needs API_TLS_CERT_FILE; works beside the bearer tokens.
   */
  @IsOptional()
  @IsString()
  API_CLIENT_CA_FILE?: string;

  /** Bearer tokens, in kube-apiserver's `--token-auth-file` format: `token,user,uid,"group1,group2"` per line. */
  @IsOptional()
  @IsString()
  API_TOKEN_AUTH_FILE?: string;

  /** RoleBindings and ClusterRoleBindings (YAML) of the built-in roles to users and groups. */
  @IsOptional()
  @IsString()
  API_AUTHORIZATION_FILE?: string;

  /** `true` serves every request without authentication, as cluster-admin: only for a lab that nobody else can reach. */
  @IsIn(['true', 'false'])
  API_INSECURE: string = 'false';

  /** The Pod Security Standard of a namespace without the `pod-security.kubernetes.io/enforce` label. */
  @IsIn(['privileged', 'baseline', 'restricted'])
  POD_SECURITY_DEFAULT: 'privileged' | 'baseline' | 'restricted' = 'baseline';
}
