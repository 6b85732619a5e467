// The console's client of sluice's API: AWS JSON 1.0 POSTs to `/` with
// `X-Amz-Target`, signed with SigV4 when the operator has signed in.

import { signRequest } from './sigv4.js';

const CREDENTIALS = 'sluice.console.credentials';

/** Codes that mean "this server wants (other) credentials". */
const AUTH_CODES = new Set([
  'MissingAuthenticationToken',
  'InvalidClientTokenId',
  'SignatureDoesNotMatch',
  'IncompleteSignature',
]);

/** An error answered by the server, with its SQS code. */
export class ApiError extends Error {
  constructor(code, message, status) {
    super(message || code);
    this.code = code;
    this.status = status;
  }

  /** Whether signing in (again) could fix it. */
  get needsSignIn() {
    return AUTH_CODES.has(this.code);
  }
}

/** The signed-in credentials, or null. Kept for this tab only. */
export function credentials() {
  try {
    return JSON.parse(sessionStorage.getItem(CREDENTIALS) || 'null');
  } catch {
    return null;
  }
}

/** Keeps `creds` ({accessKeyId, secretAccessKey, sessionToken?, region}) for this tab. */
export function signIn(creds) {
  sessionStorage.setItem(CREDENTIALS, JSON.stringify(creds));
}

/** Forgets the credentials. */
export function signOut() {
  sessionStorage.removeItem(CREDENTIALS);
}

async function call(target, payload) {
  const body = JSON.stringify(payload ?? {});
  let headers = {
    'content-type': 'application/x-amz-json-1.0',
    'x-amz-target': target,
  };
  const creds = credentials();
  if (creds) {
    // The browser sends the page's host; sign that one, but never set it.
    const signed = signRequest({
      method: 'POST',
      path: '/',
      headers: { ...headers, host: location.host },
      body,
      region: creds.region || 'us-east-1',
      service: 'sqs',
      accessKeyId: creds.accessKeyId,
      secretAccessKey: creds.secretAccessKey,
      sessionToken: creds.sessionToken || undefined,
    });
    delete signed.host;
    headers = signed;
  }
  const resp = await fetch('/', {
    method: 'POST',
    headers,
    body,
    cache: 'no-store',
    credentials: 'omit',
  });
  const text = await resp.text();
  let data = {};
  try {
    data = text ? JSON.parse(text) : {};
  } catch {
    throw new ApiError('InternalFailure', `Unreadable answer (HTTP ${resp.status})`, resp.status);
  }
  if (!resp.ok) {
    // The Query code (`SignatureDoesNotMatch`, not the JSON shape
    // `InvalidSignatureException`): the name the docs and the CLI use.
    const shape = String(data.__type || 'InternalFailure');
    const queryCode = (resp.headers.get('x-amzn-query-error') || '').split(';')[0];
    const code = queryCode || shape.slice(shape.lastIndexOf('#') + 1);
    // A signature mismatch carries the canonical request: the first line says it.
    const message = String(data.message || data.Message || code).split('\n')[0];
    throw new ApiError(code, message, resp.status);
  }
  return data;
}

/** An SQS action (`AmazonSQS.<action>`). */
export function sqs(action, payload) {
  return call(`AmazonSQS.${action}`, payload);
}

/** One of sluice's own actions (`Sluice.<action>`). */
export function sluice(action, payload) {
  return call(`Sluice.${action}`, payload);
}

/** Every queue URL, all pages of ListQueues. */
export async function listQueueUrls() {
  const urls = [];
  let token;
  do {
    const page = await sqs('ListQueues', { MaxResults: 1000, ...(token ? { NextToken: token } : {}) });
    urls.push(...(page.QueueUrls || []));
    token = page.NextToken;
  } while (token);
  return urls;
}

/** A queue's URL from its name. */
export async function queueUrl(name) {
  const out = await sqs('GetQueueUrl', { QueueName: name });
  return out.QueueUrl;
}

/** A queue's attributes (all of them). */
export async function queueAttributes(url) {
  const out = await sqs('GetQueueAttributes', { QueueUrl: url, AttributeNames: ['All'] });
  return out.Attributes || {};
}

/** The per-queue series of `/metrics` the console reads, by the key it gives them. */
const QUEUE_SERIES = {
  sluice_queue_oldest_message_age_seconds: 'oldest',
  sluice_queue_messages_sent_total: 'sent',
  sluice_queue_messages_received_total: 'received',
  sluice_queue_messages_deleted_total: 'deleted',
  sluice_queue_noisy_groups: 'noisyGroups',
  sluice_queue_quiet_group_messages_visible: 'quietVisible',
  sluice_queue_quiet_group_messages_not_visible: 'quietInFlight',
  sluice_queue_quiet_group_messages_delayed: 'quietDelayed',
  sluice_queue_quiet_group_oldest_message_age_seconds: 'quietOldest',
};

/**
 * One scrape of `/metrics` (which SQS's API does not carry): `at` (ms) and
 * by queue name the age in seconds of its oldest message, its sent,
 * received and deleted counters, and a fair queue's noisy and quiet
 * tenants; an empty map if unavailable.
 */
export async function queueMetrics() {
  const byQueue = new Map();
  const at = Date.now();
  try {
    const resp = await fetch('/metrics', { cache: 'no-store', credentials: 'omit' });
    if (!resp.ok) return { at, byQueue };
    const text = await resp.text();
    const re = /^(sluice_queue_[a-z_]+)\{queue="((?:[^"\\]|\\.)*)"\} ([0-9.eE+-]+)$/gm;
    for (const m of text.matchAll(re)) {
      const key = QUEUE_SERIES[m[1]];
      if (!key) continue;
      if (!byQueue.has(m[2])) byQueue.set(m[2], {});
      byQueue.get(m[2])[key] = Number(m[3]);
    }
  } catch {
    // Metrics are a bonus: the page works without them.
  }
  return { at, byQueue };
}
