#!/usr/bin/env node
'use strict';
// `npx sluice …`: runs the bundled binary with the same arguments, standard
// streams and exit status; signals reach it.
const { spawn } = require('node:child_process');
const { binaryPath } = require('../index.js');

let binary;
try {
  binary = binaryPath();
} catch (e) {
  console.error(e.message);
  process.exit(1);
}
const child = spawn(binary, process.argv.slice(2), { stdio: 'inherit' });
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => child.kill(signal));
}
child.on('error', (e) => {
  console.error(`cannot run ${binary}: ${e.message}`);
  process.exit(1);
});
child.on('exit', (code, signal) => {
  if (signal) process.kill(process.pid, signal);
  else process.exit(code === null ? 1 : code);
});
