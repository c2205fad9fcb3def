import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';

/** A failure the API answered with a Kubernetes Status. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly causes: Array<{ field: string; message: string }> = [],
  ) {
    super(message);
  }
}

/** Where the API is and how to prove who we are: what a kubeconfig context gives. */
export interface ApiConnection {
  server: string;
  /** Bearer token, sent on every request. */
  token?: string;
  /** PEM of the certificate authorities to trust for an https server (else the system's). */
  ca?: string;
  /** Trust any certificate (kubeconfig's insecure-skip-tls-verify). */
  insecureSkipTlsVerify?: boolean;
}

/** jetctl's only way to the cluster: the API's HTTP endpoints, over TLS when the server is https. */
export class ApiClient {
  private readonly connection: ApiConnection;

  constructor(connection: ApiConnection | string) {
    this.connection = typeof connection === 'string' ? { server: connection } : connection;
  }

  private get server(): string {
    return this.connection.server;
  }

  /** Sends one request and resolves with the response head; the body is left to read. */
  private open(method: string, path: string, body?: string, contentType?: string): Promise<IncomingMessage> {
    const url = new URL(path, this.server);
    const headers: Record<string, string> = {};
    if (body !== undefined && contentType) headers['content-type'] = contentType;
    if (this.connection.token) headers.authorization = `Bearer ${this.connection.token}`;
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const tls = url.protocol === 'https:' ? { ...(this.connection.ca ? { ca: this.connection.ca } : {}), rejectUnauthorized: !this.connection.insecureSkipTlsVerify } : {};
    return new Promise((resolve, reject) => {
      const req = send(url, { method, headers, ...tls }, resolve);
      req.once('error', (error) => reject(this.unreachable(error)));
      req.end(body);
    });
  }

  async request<T>(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<T> {
    const response = await this.open(method, path, body === undefined ? undefined : JSON.stringify(body), contentType);
    const text = await readText(response);
    const json = text ? (JSON.parse(text) as unknown) : undefined;
    if ((response.statusCode ?? 0) >= 300) {
      const status = json as { reason?: string; message?: string; details?: { causes?: Array<{ field: string; message: string }> } } | undefined;
      throw new ApiError(response.statusCode ?? 0, status?.reason ?? 'Unknown', status?.message ?? text, status?.details?.causes ?? []);
    }
    return json as T;
  }

  /** GETs `path` and copies the body to `out` as it arrives (a followed log); a failure answer throws ApiError. */
  async stream(path: string, out: NodeJS.WritableStream): Promise<void> {
    const response = await this.open('GET', path);
    if ((response.statusCode ?? 0) >= 300) {
      const text = await readText(response);
      let status: { reason?: string; message?: string } | undefined;
      try {
        status = JSON.parse(text) as typeof status;
      } catch {
        status = undefined;
      }
      throw new ApiError(response.statusCode ?? 0, status?.reason ?? 'Unknown', status?.message ?? text);
    }
    response.setEncoding('utf8');
    for await (const chunk of response) {
      const text = chunk as string;
      if (text !== '' && !out.write(text)) await new Promise((resolve) => out.once('drain', resolve));
    }
  }

  private unreachable(error: unknown): ApiError {
    return new ApiError(0, 'ServiceUnavailable', `cannot reach the jetlet API at ${this.server}: ${(error as Error).message}`);
  }
}

async function readText(response: IncomingMessage): Promise<string> {
  response.setEncoding('utf8');
  let text = '';
  for await (const chunk of response) text += chunk as string;
  return text;
}
