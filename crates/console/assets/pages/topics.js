// Topics: every topic of the account with its subscriptions
// (Sluice.DescribeTopics), what became of their messages on this node,
// and the two dead-letter queues of a subscribed queue kept apart: the
// subscription's, for what the topic could not deliver, and the queue's
// own, for what its consumer failed on (docs/sns.md).

import { queueAttributes, queueUrl, sluice } from '../api.js';
import { count, el, queueHref, queueName, replace, setText } from '../ui.js';

const REFRESH_MS = 5000;

/** The DLQ a RedrivePolicy (JSON text) names, or ''. */
function deadLetterOf(policy) {
  try {
    return queueName(JSON.parse(policy || '{}').deadLetterTargetArn || '');
  } catch {
    return '';
  }
}

/** A link to a queue's page, or a dash. */
function queueLink(name) {
  return name ? el('a', { href: queueHref(name) }, name) : el('span', { class: 'muted' }, '—');
}

/** The queue's own RedrivePolicy target, or '' (a queue that cannot be read: ''). */
async function consumersDeadLetter(name) {
  try {
    const attrs = await queueAttributes(await queueUrl(name));
    return deadLetterOf(attrs.RedrivePolicy);
  } catch {
    return '';
  }
}

/** One subscription's row. */
async function subscriptionRow(s) {
  const attrs = s.Attributes || {};
  const isQueue = s.Protocol === 'sqs';
  const queue = isQueue ? queueName(s.Endpoint) : '';
  const ownDlq = isQueue ? await consumersDeadLetter(queue) : '';
  const subscriptionDlq = deadLetterOf(attrs.RedrivePolicy);
  const cell = (col, ...children) => el('td', { dataset: { col } }, ...children);
  const filter = attrs.FilterPolicy ? `on ${attrs.FilterPolicyScope === 'MessageBody' ? 'the body' : 'attributes'}` : 'none';
  return el(
    'tr',
    { dataset: { subscription: s.SubscriptionArn } },
    cell('protocol', s.Protocol),
    cell('endpoint', isQueue ? queueLink(queue) : el('code', {}, s.Endpoint)),
    cell('status', s.PendingConfirmation ? el('span', { class: 'state unknown' }, 'pending confirmation') : 'confirmed'),
    cell('delivery', attrs.RawMessageDelivery === 'true' ? 'raw' : 'envelope'),
    cell('filter', filter),
    cell('undeliverable', subscriptionDlq ? queueLink(subscriptionDlq) : el('span', { class: 'warn' }, 'dropped')),
    cell('consumer-failures', isQueue ? (ownDlq ? queueLink(ownDlq) : el('span', { class: 'warn' }, 'none')) : el('span', { class: 'muted' }, 'n/a')),
    cell('delivered', count(s.DeliveredCount)),
    cell('filtered', count(s.FilteredOutCount)),
    cell('failed', count(s.FailedCount)),
    cell('dead-lettered', count(s.DeadLetteredCount)),
    cell('dropped', count(s.DroppedCount)),
  );
}

export async function render(root, _params, ctx) {
  const updated = el('span', { class: 'muted', id: 'topics-updated', 'aria-live': 'off' });
  const error = el('p', { class: 'status error', role: 'alert', hidden: true });
  const body = el('tbody');
  const heads = ['Protocol', 'Endpoint', 'Status', 'Delivery', 'Filter', 'Undeliverable →', 'Consumer failures →',
    'Delivered', 'Filtered out', 'Failed', 'Dead-lettered', 'Dropped'];
  const table = el(
    'table',
    { id: 'topics', class: 'topics' },
    el('caption', { class: 'visually-hidden' }, 'Topics, their subscriptions and their dead-letter queues'),
    el('thead', {}, el('tr', {}, heads.map((h) => el('th', { scope: 'col' }, h)))),
    body,
  );
  const empty = el('p', { class: 'muted', hidden: true, id: 'topics-empty' },
    'No topics. Create one with any SNS client (see docs/sns.md).');
  replace(
    root,
    el('h1', {}, 'Topics'),
    el('p', { class: 'muted' },
      'Undeliverable: the subscription\'s dead-letter queue, for what the topic could not deliver. ',
      'Consumer failures: the queue\'s own, for what its consumer failed on. Counts are this node\'s since it started.'),
    el('div', { class: 'toolbar' }, updated),
    error,
    el('div', { class: 'scroll' }, table),
    empty,
  );

  async function refresh() {
    let topics;
    try {
      topics = (await sluice('DescribeTopics', {})).Topics || [];
      error.hidden = true;
    } catch (err) {
      if (!ctx.fail(err)) return;
      error.hidden = false;
      setText(error, `Could not read the topics: ${err.code || ''} ${err.message}`);
      return;
    }
    const rows = [];
    for (const t of topics) {
      const name = queueName(t.TopicArn);
      const subs = t.Subscriptions || [];
      rows.push(el(
        'tr',
        { class: 'topic-row', dataset: { topic: name } },
        el('th', { scope: 'rowgroup', colspan: heads.length },
          name,
          (t.Attributes || {}).FifoTopic === 'true' ? el('span', { class: 'badge' }, 'FIFO') : null,
          el('span', { class: 'muted' }, ` · ${count(t.PublishedCount)} published · ${subs.length} subscription${subs.length === 1 ? '' : 's'}`)),
      ));
      for (const s of subs) rows.push(await subscriptionRow(s));
    }
    if (!ctx.live) return;
    body.replaceChildren(...rows);
    empty.hidden = topics.length > 0;
    setText(updated, `Updated ${new Date().toLocaleTimeString('en-GB', { hour12: false })}`);
    table.dataset.ready = 'true';
  }

  await refresh();
  ctx.every(REFRESH_MS, refresh);
}
