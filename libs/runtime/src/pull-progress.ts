/** How far one image pull has got, summed over its layers. */
export interface PullProgressSnapshot {
  /** Layers the engine has named so far (it names all of them before the first download). */
  layers: number;
  /** Layers pulled and extracted, or already present. */
  layersDone: number;
  /** Bytes downloaded, over the layers whose size is known. */
  currentBytes: number;
  /** Size of the layers whose size is known; 0 until the first download starts. */
  totalBytes: number;
}

interface Layer {
  current: number;
  total: number;
  done: boolean;
}

/** Statuses the engine reports per layer; anything else ("Pulling from …", "Digest: …") is about the image. */
const LAYER_STATUSES = new Set([
  'Pulling fs layer',
  'Waiting',
  'Downloading',
  'Verifying Checksum',
  'Download complete',
  'Extracting',
  'Pull complete',
  'Already exists',
]);

/**
 * Folds the engine's pull progress messages (one JSON object per line of `POST /images/create`)
 * into one figure for the whole image.
 */
export class PullProgress {
  private readonly layers = new Map<string, Layer>();

  /** Takes one progress message; true when the figure changed. */
  observe(message: unknown): boolean {
    if (typeof message !== 'object' || message === null) return false;
    const { status, id, progressDetail } = message as { status?: unknown; id?: unknown; progressDetail?: unknown };
    if (typeof status !== 'string' || typeof id !== 'string' || !LAYER_STATUSES.has(status)) return false;
    const layer = this.layers.get(id) ?? { current: 0, total: 0, done: false };
    const before = `${layer.current}/${layer.total}/${layer.done}`;
    const detail = (typeof progressDetail === 'object' && progressDetail !== null ? progressDetail : {}) as { current?: unknown; total?: unknown };
    switch (status) {
      case 'Downloading':
        if (typeof detail.total === 'number' && detail.total > 0) layer.total = detail.total;
        if (typeof detail.current === 'number') layer.current = Math.min(detail.current, layer.total || detail.current);
        break;
      case 'Verifying Checksum':
      case 'Download complete':
      case 'Extracting':
        layer.current = layer.total;
        break;
      case 'Pull complete':
      case 'Already exists':
        layer.current = layer.total;
        layer.done = true;
        break;
      default:
        break;
    }
    const isNew = !this.layers.has(id);
    this.layers.set(id, layer);
    return isNew || before !== `${layer.current}/${layer.total}/${layer.done}`;
  }

  snapshot(): PullProgressSnapshot {
    let layersDone = 0;
    let currentBytes = 0;
    let totalBytes = 0;
    for (const layer of this.layers.values()) {
      if (layer.done) layersDone += 1;
      currentBytes += layer.current;
      totalBytes += layer.total;
    }
    return { layers: this.layers.size, layersDone, currentBytes, totalBytes };
  }
}
