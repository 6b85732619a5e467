// A queue: its depths (refreshed), attributes, redrive policy, tags,
// dead-letter sources and push consumers; send a test message; purge and
// delete behind a typed confirmation of the queue's name.

import { queueAttributes, queueMetrics, queueUrl, sluice, sqs } from '../api.js';
import { editSection } from './queue-edit.js';
import { count, duration, el, prettyJson, queueHref, queueName, replace, setText, statusLine, time, typedConfirmation } from '../ui.js';

const REFRESH_MS = 3000;
const TIMESTAMPS = new Set(['CreatedTimestamp', 'LastModifiedTimestamp']);
const POLICIES = new Set(['RedrivePolicy', 'RedriveAllowPolicy', 'Policy', 'SluiceRetryBackoff']);

export async function render(root, { name }, ctx) {
  const url = await queueUrl(name);
  const [attrs, tags, sources, consumers] = await Promise.all([
    queueAttributes(url),
    sqs('ListQueueTags', { QueueUrl: url }),
    sqs('ListDeadLetterSourceQueues', { QueueUrl: url, MaxResults: 1000 }),
    listConsumers(url),
  ]);
  const sourceNames = (sources.queueUrls || sources.QueueUrls || []).map(queueName).sort();
  const isDlq = sourceNames.length > 0;
  const fifo = attrs.FifoQueue === 'true';

  const depth = (id, label) => {
    const value = el('dd', { id });
    return { node: el('div', { class: 'figure' }, el('dt', {}, label), value), value };
  };
  const visible = depth('depth-visible', 'Visible');
  const inFlight = depth('depth-in-flight', 'In flight');
  const delayed = depth('depth-delayed', 'Delayed');
  const showDepths = (a) => {
    setText(visible.value, count(a.ApproximateNumberOfMessages));
    setText(inFlight.value, count(a.ApproximateNumberOfMessagesNotVisible));
    setText(delayed.value, count(a.ApproximateNumberOfMessagesDelayed));
  };
  showDepths(attrs);

  // A fair queue's tenants (from /metrics, which the SQS API does not
  // carry): shown once the queue has any, as SQS's metrics name them.
  const noisy = depth('fair-noisy', 'Noisy groups');
  const quietVisible = depth('fair-quiet-visible', 'Quiet groups: visible');
  const quietInFlight = depth('fair-quiet-in-flight', 'Quiet groups: in flight');
  const quietOldest = depth('fair-quiet-oldest', 'Quiet groups: oldest');
  const fairSection = el('section', { 'aria-labelledby': 'h-fair', id: 'fair', hidden: true },
    el('h2', { id: 'h-fair' }, 'Fair queue'),
    el('p', { class: 'muted' }, 'Each message group is a tenant. A noisy tenant (a backlog and over a tenth of the messages in flight or of the processing time) is served after the quiet ones.'),
    el('dl', { class: 'figures' }, noisy.node, quietVisible.node, quietInFlight.node, quietOldest.node));
  const showFair = async () => {
    const m = (await queueMetrics()).byQueue.get(name) || {};
    const keys = ['noisyGroups', 'quietVisible', 'quietInFlight', 'quietDelayed', 'quietOldest'];
    if (!keys.some((k) => m[k] > 0)) return;
    fairSection.hidden = false;
    setText(noisy.value, count(m.noisyGroups || 0));
    setText(quietVisible.value, count(m.quietVisible || 0));
    setText(quietInFlight.value, count(m.quietInFlight || 0));
    setText(quietOldest.value, duration(m.quietOldest || 0));
  };
  if (!fifo) await showFair();

  const links = el(
    'nav',
    { class: 'subnav', 'aria-label': 'Queue' },
    el('a', { href: queueHref(name, 'messages') }, isDlq ? 'Messages (peek)' : 'Peek messages'),
    isDlq && el('a', { href: queueHref(name, 'redrive') }, 'Redrive'),
    isDlq && el('a', { href: queueHref(name, 'tasks') }, 'Move tasks'),
    attrs.SluiceArchiveExpired === 'true' && el('a', { href: queueHref(name, 'archive') }, 'Archive'),
  );

  // The depths are the figures above, kept fresh; the table holds the rest.
  const attributeRows = (attrs) => Object.keys(attrs)
    .filter((key) => !key.startsWith('ApproximateNumberOfMessages'))
    .sort()
    .map((key) => {
      const raw = attrs[key];
      let value = raw;
      if (TIMESTAMPS.has(key)) value = `${time(Number(raw) * 1000)} (${raw})`;
      const cell = POLICIES.has(key) ? el('pre', {}, prettyJson(raw)) : value;
      return el('tr', {}, el('th', { scope: 'row' }, key), el('td', {}, cell));
    });

  const redriveText = (attrs) => {
    if (!attrs.RedrivePolicy) return el('p', { class: 'muted' }, 'No redrive policy: failed messages are retried until they expire.');
    let target = '';
    try {
      const p = JSON.parse(attrs.RedrivePolicy);
      target = queueName(p.deadLetterTargetArn);
      return el('p', {}, 'After ', el('strong', {}, String(p.maxReceiveCount)), ' receives a message moves to ', el('a', { href: queueHref(target) }, target), '.');
    } catch {
      return el('pre', {}, attrs.RedrivePolicy);
    }
  };
  let redrive = redriveText(attrs);
  const consumerList = consumerSection();
  consumerList.show(consumers);
  const attributesBody = el('tbody', {}, attributeRows(attrs));
  const saved = (fresh) => {
    const next = redriveText(fresh);
    redrive.replaceWith(next);
    redrive = next;
    replace(attributesBody, attributeRows(fresh));
  };

  const tagEntries = Object.entries(tags.Tags || {}).sort(([a], [b]) => a.localeCompare(b));
  const tagTable = tagEntries.length
    ? el('table', { id: 'tags' }, el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'Key'), el('th', { scope: 'col' }, 'Value'))),
        el('tbody', {}, tagEntries.map(([k, v]) => el('tr', {}, el('th', { scope: 'row' }, k), el('td', {}, v)))))
    : el('p', { class: 'muted' }, 'No tags.');

  replace(
    root,
    el('p', { class: 'crumbs' }, el('a', { href: '#/queues' }, 'Queues'), ' / '),
    el('h1', {}, name, fifo && el('span', { class: 'badge' }, 'FIFO'), isDlq && el('span', { class: 'badge dlq' }, 'DLQ')),
    links,
    el('dl', { class: 'figures', id: 'depths' }, visible.node, inFlight.node, delayed.node),
    fairSection,
    isDlq &&
      el('section', { 'aria-labelledby': 'h-sources' },
        el('h2', { id: 'h-sources' }, 'Dead-letter queue of'),
        el('ul', { id: 'sources' }, sourceNames.map((s) => el('li', {}, el('a', { href: queueHref(s) }, s))))),
    el('section', { 'aria-labelledby': 'h-redrive' }, el('h2', { id: 'h-redrive' }, 'Redrive policy'), redrive),
    consumerList.node,
    editSection(url, attrs, saved),
    sendForm(url, fifo, attrs.ContentBasedDeduplication === 'true'),
    el('section', { 'aria-labelledby': 'h-attributes' },
      el('h2', { id: 'h-attributes' }, 'Attributes'),
      el('div', { class: 'scroll' }, el('table', { id: 'attributes', class: 'attributes' }, attributesBody))),
    el('section', { 'aria-labelledby': 'h-tags' }, el('h2', { id: 'h-tags' }, 'Tags'), tagTable),
    el('section', { 'aria-labelledby': 'h-danger', class: 'danger-zone' },
      el('h2', { id: 'h-danger' }, 'Purge or delete'),
      typedConfirmation({
        id: 'purge',
        name,
        label: 'Purge queue',
        explain: 'Purging deletes every message of the queue, in flight and delayed ones too. It cannot be undone.',
        action: async () => {
          await sqs('PurgeQueue', { QueueUrl: url });
          return `Purged ${name}.`;
        },
      }),
      typedConfirmation({
        id: 'delete',
        name,
        label: 'Delete queue',
        explain: 'Deleting removes the queue and all its messages. It cannot be undone.',
        action: async () => {
          await sqs('DeleteQueue', { QueueUrl: url });
          setTimeout(() => {
            location.hash = '#/queues';
          }, 800);
          return `Deleted ${name}.`;
        },
      })),
  );

  ctx.every(REFRESH_MS, async () => {
    const [fresh, readers] = await Promise.all([queueAttributes(url), listConsumers(url)]);
    showDepths(fresh);
    if (!fifo) await showFair();
    consumerList.show(readers);
  });
}

/** The push consumers reading `url` (ListConsumers), or null if they cannot be read. */
async function listConsumers(url) {
  try {
    return (await sluice('ListConsumers', { QueueUrl: url })).Consumers || [];
  } catch {
    return null;
  }
}

const CONSUMER_COLUMNS = [
  ['name', 'Name', (c) => c.Name],
  ['url', 'Handler', (c) => c.Url],
  ['state', 'State', (c) => c.State],
  ['in-flight', 'Batches in flight', (c) => `${count(c.InFlightBatches)} of ${count(c.ConcurrencyLimit)} (max ${count(c.MaxConcurrency)})`],
  ['batch', 'Batch size', (c) => (c.BatchingWindowSeconds ? `${count(c.BatchSize)}, window ${c.BatchingWindowSeconds} s` : count(c.BatchSize))],
  ['timeout', 'Timeout', (c) => `${c.TimeoutSeconds} s`],
  ['failures', 'Item failures', (c) => (c.ReportBatchItemFailures ? 'reported' : 'whole batch')],
  ['source', 'Defined in', (c) => c.Source],
];

/**
 * The push consumers that read this queue (docs/consumers.md):
 * `{node, show(consumers)}`, `show` redrawing only what changed.
 */
function consumerSection() {
  const holder = el('div');
  let shown;
  const show = (consumers) => {
    const key = JSON.stringify(consumers);
    if (key === shown) return;
    shown = key;
    if (consumers === null) {
      replace(holder, el('p', { class: 'muted' }, 'The push consumers cannot be read with these credentials.'));
    } else if (!consumers.length) {
      replace(holder, el('p', { class: 'muted' }, 'No push consumer reads this queue.'));
    } else {
      replace(holder, el('div', { class: 'scroll' }, el('table', { id: 'consumers' },
        el('thead', {}, el('tr', {}, CONSUMER_COLUMNS.map(([, label]) => el('th', { scope: 'col' }, label)))),
        el('tbody', {}, consumers.map((c) => el('tr', { dataset: { consumer: c.Name } },
          CONSUMER_COLUMNS.map(([col, , value], i) => el(i ? 'td' : 'th', { scope: i ? null : 'row', dataset: { col } }, String(value(c))))))))));
    }
  };
  const node = el('section', { 'aria-labelledby': 'h-consumers' }, el('h2', { id: 'h-consumers' }, 'Push consumers'), holder);
  return { node, show };
}

function sendForm(url, fifo, contentDedup) {
  const status = statusLine();
  const form = el(
    'form',
    { id: 'send', class: 'stack' },
    el('div', { class: 'field' }, el('label', { for: 'send-body' }, 'Body'), el('textarea', { id: 'send-body', rows: 4, required: true, spellcheck: 'false' }, '{"test": true}')),
    fifo && el('div', { class: 'field' }, el('label', { for: 'send-group' }, 'Message group ID'), el('input', { id: 'send-group', required: true, value: 'console' })),
    fifo && !contentDedup && el('div', { class: 'field' }, el('label', { for: 'send-dedup' }, 'Deduplication ID'), el('input', { id: 'send-dedup', required: true })),
    !fifo && el('div', { class: 'field' }, el('label', { for: 'send-delay' }, 'Delay (seconds, 0–900)'), el('input', { id: 'send-delay', type: 'number', min: 0, max: 900, value: 0 })),
    el('div', {}, el('button', { type: 'submit' }, 'Send message')),
    status.node,
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const input = { QueueUrl: url, MessageBody: form.querySelector('#send-body').value };
    if (fifo) {
      input.MessageGroupId = form.querySelector('#send-group').value;
      const dedup = form.querySelector('#send-dedup');
      if (dedup) input.MessageDeduplicationId = dedup.value;
    } else {
      const delay = Number(form.querySelector('#send-delay').value || 0);
      if (delay) input.DelaySeconds = delay;
    }
    try {
      const out = await sqs('SendMessage', input);
      status.ok(`Sent: message ${out.MessageId}`);
    } catch (err) {
      status.error(err);
    }
  });
  return el('section', { 'aria-labelledby': 'h-send' }, el('h2', { id: 'h-send' }, 'Send a test message'), form);
}
