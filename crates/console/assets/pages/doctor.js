// Doctor: the findings of `sluice doctor`'s checks that the browser can
// compute from the queues' attributes, tags and alarms, with their fixes;
// re-checked every few seconds, redrawn only when the findings change.

import { listQueueUrls, queueAttributes, sluice, sqs } from '../api.js';
import { CHECKS, CLI_ONLY, diagnose } from '../doctor.js';
import { el, queueHref, queueName, replace, setText } from '../ui.js';

const REFRESH_MS = 5000;

async function readSetup() {
  const urls = await listQueueUrls();
  const queues = await Promise.all(
    urls.map(async (url) => {
      try {
        const [attrs, tags] = await Promise.all([queueAttributes(url), sqs('ListQueueTags', { QueueUrl: url })]);
        return { name: queueName(url), arn: attrs.QueueArn, attrs, tags: tags.Tags || {} };
      } catch (err) {
        // Deleted between the list and the read.
        if (err.code === 'QueueDoesNotExist' || err.code === 'AWS.SimpleQueueService.NonExistentQueue') return null;
        throw err;
      }
    }),
  );
  let alarms = null;
  try {
    alarms = (await sluice('DescribeAlarms', {})).Alarms || [];
  } catch (err) {
    // A key that may not read alarms still gets the other checks.
    if (err.code !== 'AccessDenied') throw err;
  }
  return { queues: queues.filter(Boolean), alarms };
}

export async function render(root, _params, ctx) {
  const summary = el('p', { id: 'doctor-summary', class: 'big', role: 'status' });
  const list = el('div', { id: 'findings' });
  const skipped = el('p', { class: 'muted', id: 'doctor-skipped', hidden: true });
  const recheck = el('button', { type: 'button', id: 'doctor-recheck' }, 'Check again');
  replace(
    root,
    el('h1', {}, 'Doctor'),
    el('p', { class: 'muted' },
      'The known dead-letter pitfalls, checked against the queues as they are now (the same checks and wording as ',
      el('code', {}, 'sluice doctor'), '). Checked here: ', CHECKS.map((c, i) => [i ? ', ' : '', el('code', {}, c)]), '.'),
    el('div', { class: 'toolbar' }, recheck, el('a', { href: '#/alarms' }, 'Alarms')),
    summary,
    skipped,
    list,
    el('section', { 'aria-labelledby': 'h-cli-only' },
      el('h2', { id: 'h-cli-only' }, 'Only in the CLI'),
      el('p', {}, 'These checks need more than the queues’ attributes; run ', el('code', {}, 'sluice doctor'), ' for them:'),
      el('ul', { id: 'cli-only' }, Object.entries(CLI_ONLY).map(([id, why]) => el('li', {}, el('code', {}, id), `: ${why}.`)))),
  );

  let shown = null;
  async function check() {
    const { queues, alarms } = await readSetup();
    const findings = diagnose(queues, alarms);
    skipped.hidden = alarms !== null;
    setText(skipped, alarms === null ? 'dlq-alarm not checked: this key may not read alarms (DescribeAlarms).' : '');
    const key = JSON.stringify(findings);
    if (key === shown) return;
    shown = key;
    const counts = ['critical', 'warning', 'info'].map((s) => [s, findings.filter((f) => f.severity === s).length]).filter(([, n]) => n);
    setText(summary, findings.length
      ? `${findings.length} finding${findings.length === 1 ? '' : 's'}: ${counts.map(([s, n]) => `${n} ${s}`).join(', ')}`
      : `No findings in ${queues.length} queue${queues.length === 1 ? '' : 's'}.`);
    replace(
      list,
      findings.map((f) =>
        el('article', { class: `finding ${f.severity}`, dataset: { check: f.check, queue: f.queue, severity: f.severity } },
          el('h2', {}, el('span', { class: `severity ${f.severity}` }, f.severity), ' ', el('code', {}, f.check), ' on ', el('a', { href: queueHref(f.queue) }, f.queue)),
          el('p', {}, f.problem),
          el('p', { class: 'fix' }, el('strong', {}, 'Fix: '), f.fix))),
    );
    list.dataset.ready = 'true';
  }
  recheck.addEventListener('click', async () => {
    recheck.disabled = true;
    try {
      await check();
    } catch (err) {
      if (ctx.fail(err)) setText(summary, `Could not check: ${err.code || ''} ${err.message}`);
    } finally {
      recheck.disabled = false;
    }
  });
  await check();
  ctx.every(REFRESH_MS, check);
}
