import { IsInt, IsIP, IsNumber, Max, Min } from 'class-validator';
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
}
