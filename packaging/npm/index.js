'use strict';
// sluice for Node: start the SQS-compatible server from a test suite.
//
//   const { startSluice } = require('sluice-sqs');
//   const sluice = await startSluice();            // in memory, free loopback port
//   const sqs = new SQSClient(sluice.clientConfig);
//   ...
//   await sluice.stop();
//
// The binary is the one this package carries (vendor/sluice), or the one
// SLUICE_BINARY names.

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const readline = require('node:readline');

const LISTENING = 'sluice listening on ';
const START_TIMEOUT_MS = 30000;

/** The path of the sluice binary this package runs. */
function binaryPath() {
  if (process.env.SLUICE_BINARY) return process.env.SLUICE_BINARY;
  const bundled = path.join(__dirname, 'vendor', 'sluice');
  if (fs.existsSync(bundled)) return bundled;
  throw new Error(
    `sluice-sqs carries a binary for linux-x64 only (this is ${process.platform}-${process.arch}); ` +
      'build sluice from source and set SLUICE_BINARY to its path',
  );
}

/**
 * Starts `sluice serve` on a free loopback port, in memory unless
 * `options.inMemory` is false, and resolves once it listens.
 * @param {{args?: string[], inMemory?: boolean, region?: string, binary?: string}} [options]
 */
function startSluice(options = {}) {
  const region = options.region || 'us-east-1';
  const args = ['serve', '--bind', '127.0.0.1:0'];
  if (options.inMemory !== false) args.push('--in-memory');
  // A test that deletes a queue may create it again at once.
  args.push('--deleted-queue-name-hold-secs', '0', ...(options.args || []));
  const child = spawn(options.binary || binaryPath(), args, {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = [];
  child.stderr.on('data', (chunk) => {
    if (output.length < 200) output.push(String(chunk));
  });
  return new Promise((resolve, reject) => {
    let settled = false;
    const fail = (why) => {
      if (settled) return;
      settled = true;
      child.kill('SIGKILL');
      reject(new Error(`sluice did not start: ${why}\n${output.join('')}`));
    };
    const timer = setTimeout(() => fail('no answer in time'), START_TIMEOUT_MS);
    child.on('error', (e) => fail(e.message));
    child.on('exit', (code, signal) => fail(`it exited (${signal || code})`));
    const lines = readline.createInterface({ input: child.stdout });
    lines.on('line', (line) => {
      if (settled || !line.startsWith(LISTENING)) return;
      settled = true;
      clearTimeout(timer);
      const endpoint = line.slice(LISTENING.length).trim();
      const credentials = { accessKeyId: 'test', secretAccessKey: 'test' };
      resolve({
        endpoint,
        region,
        credentials,
        /** Options for `new SQSClient(...)` of @aws-sdk/client-sqs. */
        clientConfig: { endpoint, region, credentials },
        process: child,
        /** Stops the server: SIGTERM, then SIGKILL after five seconds. */
        stop: () => stop(child),
      });
    });
  });
}

function stop(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const force = setTimeout(() => child.kill('SIGKILL'), 5000);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

module.exports = { startSluice, binaryPath };
