import type { ChildProcess } from 'node:child_process';

/** Options of {@link startSluice}. */
export interface SluiceOptions {
  /** Extra `sluice serve` arguments, e.g. `['--config', 'sluice.toml']`. */
  args?: string[];
  /** Keep queues in memory (default true). */
  inMemory?: boolean;
  /** The region clients sign for (default `us-east-1`). */
  region?: string;
  /** Another sluice binary than the bundled one. */
  binary?: string;
}

/** A running server. */
export interface Sluice {
  /** `http://127.0.0.1:PORT`. */
  endpoint: string;
  region: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  /** Options for `new SQSClient(...)` of @aws-sdk/client-sqs. */
  clientConfig: {
    endpoint: string;
    region: string;
    credentials: { accessKeyId: string; secretAccessKey: string };
  };
  process: ChildProcess;
  /** Stops the server. */
  stop(): Promise<void>;
}

/** Starts a sluice server on a free loopback port. */
export function startSluice(options?: SluiceOptions): Promise<Sluice>;

/** The sluice binary this package runs. */
export function binaryPath(): string;
