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

/** jetctl's only way to the cluster: the API's HTTP endpoints. */
export class ApiClient {
  constructor(private readonly server: string) {}

  async request<T>(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<T> {
    let response: Response;
    try {
      response = await fetch(new URL(path, this.server), {
        method,
        headers: body === undefined ? {} : { 'content-type': contentType },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (error) {
      throw this.unreachable(error);
    }
    const text = await response.text();
    const json = text ? (JSON.parse(text) as unknown) : undefined;
    if (!response.ok) {
      const status = json as { reason?: string; message?: string; details?: { causes?: Array<{ field: string; message: string }> } } | undefined;
      throw new ApiError(response.status, status?.reason ?? 'Unknown', status?.message ?? text, status?.details?.causes ?? []);
    }
    return json as T;
  }

  /** GETs `path` and copies the body to `out` as it arrives (a followed log); a failure answer throws ApiError. */
  async stream(path: string, out: NodeJS.WritableStream): Promise<void> {
    let response: Response;
    try {
      response = await fetch(new URL(path, this.server));
    } catch (error) {
      throw this.unreachable(error);
    }
    if (!response.ok) {
      const text = await response.text();
      let status: { reason?: string; message?: string } | undefined;
      try {
        status = JSON.parse(text) as typeof status;
      } catch {
        status = undefined;
      }
      throw new ApiError(response.status, status?.reason ?? 'Unknown', status?.message ?? text);
    }
    if (!response.body) return;
    const decoder = new TextDecoder();
    const reader = response.body.getReader();
    for (let read = await reader.read(); !read.done; read = await reader.read()) {
      const text = decoder.decode(read.value as Uint8Array, { stream: true });
      if (text !== '' && !out.write(text)) await new Promise((resolve) => out.once('drain', resolve));
    }
    const rest = decoder.decode();
    if (rest !== '') out.write(rest);
  }

  private unreachable(error: unknown): ApiError {
    return new ApiError(
      0,
      'ServiceUnavailable',
      `cannot reach the jetlet API at ${this.server}: ${error instanceof Error && error.cause instanceof Error ? error.cause.message : (error as Error).message}`,
    );
  }
}
