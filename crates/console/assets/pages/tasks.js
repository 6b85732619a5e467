// Message move tasks of a DLQ: start one (to each message's source or a
// destination, at a rate), follow its progress and the rate it moves at
// until it ends, cancel it.

import { queueAttributes, queueUrl, sqs } from '../api.js';
import { count, el, queueHref, queueName, replace, setText, statusLine, time } from '../ui.js';

const FOLLOW_MS = 1000;
const ENDED = new Set(['COMPLETED', 'CANCELLED', 'FAILED']);

export async function render(root, { name }, ctx) {
  const url = await queueUrl(name);
  const arn = (await queueAttributes(url)).QueueArn;
  const status = statusLine();
  const destination = el('input', { id: 'task-destination', type: 'text', placeholder: "each message's source", spellcheck: 'false' });
  const rate = el('input', { id: 'task-rate', type: 'number', min: 1, max: 500, placeholder: 'as fast as possible' });
  const form = el(
    'form',
    { id: 'start-task', class: 'filters' },
    el('div', { class: 'field' }, el('label', { for: 'task-destination' }, 'Destination queue ARN (optional)'), destination),
    el('div', { class: 'field' }, el('label', { for: 'task-rate' }, 'Messages per second (1–500, optional)'), rate),
    el('div', { class: 'field end' }, el('button', { type: 'submit', id: 'start-task-button' }, 'Start move task')),
  );
  const tbody = el('tbody');
  const table = el(
    'table',
    { id: 'tasks' },
    el('caption', { class: 'visually-hidden' }, `Move tasks of ${name}`),
    el('thead', {}, el('tr', {},
      el('th', { scope: 'col' }, 'Started'),
      el('th', { scope: 'col' }, 'Status'),
      el('th', { scope: 'col' }, 'Progress'),
      el('th', { scope: 'col' }, 'Destination'),
      el('th', { scope: 'col' }, 'Rate'),
      el('th', { scope: 'col' }, ''))),
    tbody,
  );
  const none = el('p', { class: 'muted', hidden: true }, 'No move tasks yet.');

  replace(
    root,
    el('p', { class: 'crumbs' }, el('a', { href: '#/queues' }, 'Queues'), ' / ', el('a', { href: queueHref(name) }, name), ' / '),
    el('h1', {}, `Move tasks of ${name}`),
    el('p', {}, 'A move task moves every message of this dead-letter queue at a bounded rate, in the background. One task at a time per queue.'),
    form,
    status.node,
    el('div', { class: 'scroll' }, table),
    none,
  );

  /** StartedTimestamp → {row, cells} */
  const rows = new Map();

  function rowFor(t) {
    const key = String(t.StartedTimestamp);
    let entry = rows.get(key);
    if (!entry) {
      const cell = (col) => el('td', { dataset: { col } });
      const cells = { status: cell('status'), progress: cell('progress'), destination: cell('destination'), rate: cell('rate'), action: cell('action') };
      const bar = el('progress', { max: 1, value: 0, 'aria-label': 'Messages moved' });
      const figures = el('span', { class: 'small' });
      cells.progress.append(bar, ' ', figures);
      const cancel = el('button', { type: 'button', class: 'danger', hidden: true }, 'Cancel');
      cancel.addEventListener('click', async () => {
        cancel.disabled = true;
        try {
          const out = await sqs('CancelMessageMoveTask', { TaskHandle: entry.handle });
          status.ok(`Cancelled: ${count(out.ApproximateNumberOfMessagesMoved)} moved before the cancel.`);
        } catch (err) {
          if (ctx.fail(err)) status.error(err);
        }
        cancel.disabled = false;
        follow();
      });
      cells.action.append(cancel);
      const row = el('tr', { dataset: { started: key } }, el('td', {}, time(t.StartedTimestamp)), cells.status, cells.progress, cells.destination, cells.rate, cells.action);
      entry = { row, cells, bar, figures, cancel, handle: null, seen: null };
      rows.set(key, entry);
    }
    entry.handle = t.TaskHandle || null;
    const moved = Number(t.ApproximateNumberOfMessagesMoved || 0);
    const total = Number(t.ApproximateNumberOfMessagesToMove || 0);
    setText(entry.cells.status, t.FailureReason ? `${t.Status}: ${t.FailureReason}` : t.Status);
    entry.row.dataset.status = t.Status;
    entry.bar.max = Math.max(total, 1);
    entry.bar.value = total ? Math.min(moved, total) : t.Status === 'COMPLETED' ? 1 : 0;
    setText(entry.figures, `${count(moved)} of ${count(total)}`);
    setText(entry.cells.destination, t.DestinationArn ? queueName(t.DestinationArn) : "each message's source");
    // The rate it moved at while this page followed it: from the first
    // time the page saw it running to the last.
    if (t.Status === 'RUNNING' || (entry.seen && entry.seen.running)) {
      const at = Date.now();
      if (!entry.seen) entry.seen = { at, moved, running: true };
      entry.seen.last = { at, moved };
      if (t.Status !== 'RUNNING') entry.seen.running = false;
    }
    const limit = t.MaxNumberOfMessagesPerSecond ? `limit ${t.MaxNumberOfMessagesPerSecond}/s` : 'no limit';
    const seen = entry.seen;
    const seconds = seen ? (seen.last.at - seen.at) / 1000 : 0;
    const measured = seconds >= 1 ? `${((seen.last.moved - seen.moved) / seconds).toFixed(1)}/s · ` : '';
    setText(entry.cells.rate, `${measured}${limit}`);
    entry.cancel.hidden = !(t.Status === 'RUNNING' && t.TaskHandle);
    return entry.row;
  }

  async function follow() {
    const out = await sqs('ListMessageMoveTasks', { SourceArn: arn, MaxResults: 10 });
    const results = out.Results || [];
    const wanted = results.map(rowFor);
    const same = wanted.length === tbody.children.length && wanted.every((r, i) => tbody.children[i] === r);
    if (!same) tbody.replaceChildren(...wanted);
    none.hidden = results.length > 0;
    table.dataset.ready = 'true';
    return results.some((t) => !ENDED.has(t.Status));
  }

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const input = { SourceArn: arn };
    if (destination.value.trim()) input.DestinationArn = destination.value.trim();
    if (rate.value) input.MaxNumberOfMessagesPerSecond = Number(rate.value);
    try {
      await sqs('StartMessageMoveTask', input);
      status.ok('Move task started.');
      await follow();
    } catch (err) {
      if (ctx.fail(err)) status.error(err);
    }
  });

  await follow();
  ctx.every(FOLLOW_MS, follow);
}
