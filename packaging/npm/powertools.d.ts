// Types of sluice-sqs/powertools: a persistence layer for Powertools for
// AWS Lambda (TypeScript)'s idempotency utility that keeps its records in
// sluice.
import { BasePersistenceLayer } from '@aws-lambda-powertools/idempotency/persistence';

export interface SluicePersistenceLayerOptions {
  /** The sluice server, e.g. http://127.0.0.1:9324. */
  endpoint: string;
  /** The region requests are signed for (default us-east-1). */
  region?: string;
  /** Put before every key, e.g. the function's name. */
  keyPrefix?: string;
  /** Signs the requests; default: the environment's, if any; null: unsigned. */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string } | null;
  /** Each request's time limit, ms (default 10,000). */
  timeoutMs?: number;
}

/** Powertools' idempotency records in a sluice server. */
export declare class SluicePersistenceLayer extends BasePersistenceLayer {
  constructor(options: SluicePersistenceLayerOptions);
}
