import { compareText } from './compare-text.js';
/**
 * The kubelet's image garbage collection policy (pkg/kubelet/images/image_gc_manager.go), pure:
 * when the image filesystem is used at or above the high threshold, free enough to bring it down
 * to the low threshold by removing unused images, least recently used first.
 */

/** An image as the engine lists it. */
export interface EngineImage {
  id: string;
  /** Bytes the image takes. */
  size: number;
}

/** What the policy remembers of an image, as the kubelet's imageRecord. */
export interface ImageRecord {
  id: string;
  size: number;
  /** When this process first saw the image (ms). */
  firstDetectedMs: number;
  /** When a container last used it, as far as this process saw (ms); 0 if none has. */
  lastUsedMs: number;
}

export interface ImageGcPolicy {
  /** Usage (percent of capacity) at or above which images are collected; 100 turns collection off. */
  highThresholdPercent: number;
  /** Usage collection brings the filesystem down to. */
  lowThresholdPercent: number;
  /** An image seen for less than this is never removed (the kubelet's imageMinimumGCAge). */
  minAgeMs: number;
}

/** Bytes to free on a filesystem of `capacity` with `available` left; 0 when below the high threshold. */
export function bytesToFree(policy: ImageGcPolicy, capacity: number, available: number): number {
  if (capacity <= 0 || policy.highThresholdPercent >= 100) return 0;
  const usagePercent = 100 - (available * 100) / capacity;
  if (usagePercent < policy.highThresholdPercent) return 0;
  return Math.max(0, Math.ceil((capacity * (100 - policy.lowThresholdPercent)) / 100 - available));
}

/** What one collection would remove, and how much it falls short of what was asked. */
export interface ImageGcPlan {
  remove: ImageRecord[];
  freedBytes: number;
  /** Bytes asked for that no eligible image could give; 0 when enough was found. */
  shortfallBytes: number;
}

/** The kubelet's imageRecords: kept across looks so "least recently used" means something. */
export class ImageRecords {
  private readonly records = new Map<string, ImageRecord>();

  /**
   * Takes the engine's images and those containers use now: new images are recorded, images in
   * use have their lastUsed moved to now, images gone are forgotten.
   */
  detect(images: readonly EngineImage[], inUse: ReadonlySet<string>, nowMs: number): void {
    const present = new Set(images.map((i) => i.id));
    for (const id of [...this.records.keys()]) if (!present.has(id)) this.records.delete(id);
    for (const image of images) {
      const known = this.records.get(image.id);
      const record = known ?? { id: image.id, size: image.size, firstDetectedMs: nowMs, lastUsedMs: 0 };
      record.size = image.size;
      if (inUse.has(image.id)) record.lastUsedMs = nowMs;
      this.records.set(image.id, record);
    }
  }

  get(id: string): ImageRecord | undefined {
    return this.records.get(id);
  }

  /**
   * The images to remove to free `bytes`: not in use, not pinned, seen for at least the minimum
   * age; least recently used first, then first detected first, until enough is freed.
   */
  plan(bytes: number, inUse: ReadonlySet<string>, pinned: ReadonlySet<string>, nowMs: number, minAgeMs: number): ImageGcPlan {
    const eligible = [...this.records.values()]
      .filter((r) => !inUse.has(r.id) && !pinned.has(r.id) && nowMs - r.firstDetectedMs >= minAgeMs)
      .sort((a, b) => a.lastUsedMs - b.lastUsedMs || a.firstDetectedMs - b.firstDetectedMs || compareText(a.id, b.id));
    const remove: ImageRecord[] = [];
    let freedBytes = 0;
    for (const record of eligible) {
      if (freedBytes >= bytes) break;
      remove.push(record);
      freedBytes += record.size;
    }
    return { remove, freedBytes, shortfallBytes: Math.max(0, bytes - freedBytes) };
  }
}
