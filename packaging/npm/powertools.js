'use strict';
// A persistence layer for Powertools for AWS Lambda (TypeScript)'s
// idempotency utility that keeps its records in sluice
// (Sluice.ClaimIdempotencyKey, CompleteIdempotencyKey,
// ReleaseIdempotencyKey), so a handler already wrapped with makeIdempotent
// or @idempotent runs against sluice unchanged but for its persistence
// store:
//
//   const { makeIdempotent, IdempotencyConfig } = require('@aws-lambda-powertools/idempotency');
//   const { SluicePersistenceLayer } = require('sluice-sqs/powertools');
//
//   const persistenceStore = new SluicePersistenceLayer({ endpoint: 'http://127.0.0.1:9324' });
//   exports.handler = makeIdempotent(async (event) => { ... }, {
//     persistenceStore,
//     config: new IdempotencyConfig({ eventKeyJmesPath: 'messageId' }),
//   });
//
// A key is claimed before the handler runs: a claim that finds it in
// progress elsewhere makes Powertools throw IdempotencyAlreadyInProgressError,
// one that finds it completed returns the stored response without running
// the handler. The handler's response is stored at completion; a handler
// that throws releases the key. Requests are signed with SigV4 (service
// `sqs`) when credentials are given or in the environment
// (AWS_ACCESS_KEY_ID, as Lambda sets them), with @smithy/signature-v4 and
// @aws-crypto/sha256-js, which the AWS SDK v3 (and Lambda's Node.js
// runtime) carry.
//
// Needs @aws-lambda-powertools/idempotency (2.x) and Node.js 18 or later.

const { BasePersistenceLayer, IdempotencyRecord } = require('@aws-lambda-powertools/idempotency/persistence');
const {
  IdempotencyItemAlreadyExistsError,
  IdempotencyItemNotFoundError,
  IdempotencyPersistenceLayerError,
  IdempotencyRecordStatus,
} = require('@aws-lambda-powertools/idempotency');

// How long a claim holds when Powertools knows no Lambda context to take
// the remaining time from: the server's own default.
const DEFAULT_IN_PROGRESS_SECONDS = 60;
// The server's bounds (rule I1).
const MAX_TTL_SECONDS = 30 * 24 * 3600;
const MAX_IN_PROGRESS_SECONDS = 12 * 3600;

const clamp = (n, low, high) => Math.min(Math.max(n, low), high);

/** Powertools' idempotency records in a sluice server. */
class SluicePersistenceLayer extends BasePersistenceLayer {
  /**
   * @param {object} options
   * @param {string} options.endpoint the sluice server, e.g. http://127.0.0.1:9324
   * @param {string} [options.region] the region requests are signed for (us-east-1)
   * @param {string} [options.keyPrefix] put before every key (e.g. the function's name)
   * @param {{accessKeyId: string, secretAccessKey: string, sessionToken?: string} | null} [options.credentials]
   *   signs the requests; default: the environment's, if any; `null`: unsigned
   * @param {number} [options.timeoutMs] each request's time limit (10,000)
   */
  constructor({ endpoint, region = 'us-east-1', keyPrefix = '', credentials, timeoutMs = 10000 }) {
    super();
    if (!endpoint) throw new TypeError('SluicePersistenceLayer needs an endpoint');
    this.endpoint = new URL(endpoint.replace(/\/*$/, '/'));
    this.region = region;
    this.keyPrefix = keyPrefix;
    this.credentials = credentials === undefined ? environmentCredentials() : credentials;
    this.timeoutMs = timeoutMs;
  }

  async _putRecord(record) {
    const nowMs = Date.now();
    const ttl = Math.round((record.expiryTimestamp ?? 0) - nowMs / 1000);
    const body = { Key: this.keyPrefix + record.idempotencyKey, TtlSeconds: clamp(ttl, 1, MAX_TTL_SECONDS) };
    body.InProgressSeconds =
      record.inProgressExpiryTimestamp === undefined
        ? DEFAULT_IN_PROGRESS_SECONDS
        : clamp(Math.ceil((record.inProgressExpiryTimestamp - nowMs) / 1000), 1, MAX_IN_PROGRESS_SECONDS);
    const answer = await this.call('ClaimIdempotencyKey', body);
    if (answer.Status === 'CLAIMED') return;
    // Not expired as far as Powertools can tell: the server answered for
    // the key, so within its time to live.
    const existing = {
      idempotencyKey: record.idempotencyKey,
      expiryTimestamp: Math.floor(nowMs / 1000) + 1,
    };
    if (answer.Status === 'IN_PROGRESS') {
      existing.status = IdempotencyRecordStatus.INPROGRESS;
      existing.inProgressExpiryTimestamp = answer.InProgressExpiryTimestamp;
    } else if (answer.Status === 'COMPLETED') {
      const stored = decodeResult(answer.Result);
      existing.status = IdempotencyRecordStatus.COMPLETED;
      existing.responseData = stored.response;
      existing.payloadHash = stored.payloadHash;
    } else {
      throw new IdempotencyPersistenceLayerError(`unexpected claim status ${JSON.stringify(answer.Status)}`);
    }
    throw new IdempotencyItemAlreadyExistsError(
      `Failed to put record for already existing idempotency key: ${record.idempotencyKey}`,
      new IdempotencyRecord(existing),
    );
  }

  async _updateRecord(record) {
    const result = JSON.stringify({ response: record.responseData, payloadHash: record.payloadHash });
    await this.call('CompleteIdempotencyKey', { Key: this.keyPrefix + record.idempotencyKey, Result: result });
  }

  async _deleteRecord(record) {
    try {
      await this.call('ReleaseIdempotencyKey', { Key: this.keyPrefix + record.idempotencyKey });
    } catch (e) {
      // Its claim lapsed and another took it, or it is gone: nothing of
      // this invocation's is left to release.
      if (!(e instanceof NotInProgress)) throw e;
    }
  }

  async _getRecord(idempotencyKey) {
    // A claim that finds the key taken always carries the record it found
    // (IdempotencyItemAlreadyExistsError's existingRecord), so Powertools
    // has no need to read one apart; sluice offers no read that would not
    // claim.
    throw new IdempotencyItemNotFoundError(`no record read apart for ${idempotencyKey}`);
  }

  /** One of sluice's actions, in the JSON protocol; its answer. */
  async call(action, payload) {
    const body = JSON.stringify(payload);
    let headers = {
      'content-type': 'application/x-amz-json-1.0',
      'x-amz-target': `Sluice.${action}`,
      host: this.endpoint.host,
    };
    if (this.credentials) headers = await this.signed(body, headers);
    delete headers.host; // fetch sets it, to the same value
    const response = await fetch(this.endpoint, {
      method: 'POST',
      headers,
      body,
      signal: AbortSignal.timeout(this.timeoutMs),
    });
    const text = await response.text();
    if (response.ok) return text ? JSON.parse(text) : {};
    const code = (response.headers.get('x-amzn-query-error') || '').split(';')[0] || errorType(text);
    if (code === 'ResourceNotFoundException') throw new NotInProgress(text);
    throw new IdempotencyPersistenceLayerError(`${action}: ${response.status} ${code}: ${text}`);
  }

  async signed(body, headers) {
    let SignatureV4;
    let Sha256;
    try {
      ({ SignatureV4 } = require('@smithy/signature-v4'));
      ({ Sha256 } = require('@aws-crypto/sha256-js'));
    } catch (e) {
      throw new IdempotencyPersistenceLayerError(
        'signing needs @smithy/signature-v4 and @aws-crypto/sha256-js (the AWS SDK v3 carries them); ' +
          'install them, or give credentials: null for an unsigned server',
        { cause: e },
      );
    }
    const signer = new SignatureV4({ service: 'sqs', region: this.region, credentials: this.credentials, sha256: Sha256 });
    const request = await signer.sign({
      method: 'POST',
      protocol: this.endpoint.protocol,
      hostname: this.endpoint.hostname,
      port: this.endpoint.port ? Number(this.endpoint.port) : undefined,
      path: this.endpoint.pathname,
      headers,
      body,
    });
    return request.headers;
  }
}

/** The server answered ResourceNotFoundException: the key is not in progress. */
class NotInProgress extends Error {}

function environmentCredentials() {
  const { AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN } = process.env;
  if (!AWS_ACCESS_KEY_ID || !AWS_SECRET_ACCESS_KEY) return null;
  return { accessKeyId: AWS_ACCESS_KEY_ID, secretAccessKey: AWS_SECRET_ACCESS_KEY, sessionToken: AWS_SESSION_TOKEN };
}

function errorType(text) {
  try {
    return (JSON.parse(text).__type || '').split('#').pop();
  } catch {
    return '';
  }
}

function decodeResult(result) {
  try {
    const stored = JSON.parse(result || '');
    return stored && typeof stored === 'object' ? stored : {};
  } catch {
    return {};
  }
}

module.exports = { SluicePersistenceLayer };
