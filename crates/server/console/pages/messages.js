// A queue's messages (above all a DLQ's), read with PeekMessages: nothing
// is received, no receive count changes. Filtered by failure reason and
// body text, paged; a message's detail shows its body (pretty JSON),
// attributes and provenance. Selected messages go to the redrive page.

import { queueUrl, sluice } from '../api.js';
import { count, el, prettyJson, queueHref, queueName, replace, statusLine, time } from '../ui.js';

const PAGE_SIZE = 20;
/** Where the selection waits for the redrive page (this tab only). */
export const SELECTION_KEY = 'sluice.console.selection';

/** The filter parameters of PeekMessages/RedriveMessages from the form's values. */
export function filterInput({ reason, body }) {
  const f = {};
  if (reason) f.FailureReasonContains = reason;
  if (body) f.BodyContains = body;
  return f;
}

export async function render(root, { name, query }, ctx) {
  const url = await queueUrl(name);
  const status = statusLine();
  const reason = el('input', { id: 'filter-reason', type: 'search', value: query.get('reason') || '', spellcheck: 'false' });
  const bodyText = el('input', { id: 'filter-body', type: 'search', value: query.get('body') || '', spellcheck: 'false' });
  const filterForm = el(
    'form',
    { id: 'filter', class: 'filters' },
    el('div', { class: 'field' }, el('label', { for: 'filter-reason' }, 'Failure reason contains'), reason),
    el('div', { class: 'field' }, el('label', { for: 'filter-body' }, 'Body contains'), bodyText),
    el('div', { class: 'field end' }, el('button', { type: 'submit' }, 'Search')),
  );
  const tbody = el('tbody');
  const table = el(
    'table',
    { id: 'messages', class: 'messages' },
    el('caption', { class: 'visually-hidden' }, `Messages of ${name}`),
    el('thead', {}, el('tr', {},
      el('th', { scope: 'col' }, el('span', { class: 'visually-hidden' }, 'Select')),
      el('th', { scope: 'col' }, 'Message ID'),
      el('th', { scope: 'col' }, 'Sent'),
      el('th', { scope: 'col' }, 'State'),
      el('th', { scope: 'col', class: 'num' }, 'Receives'),
      el('th', { scope: 'col' }, 'Failure reason'),
      el('th', { scope: 'col' }, 'Body'))),
    tbody,
  );
  const detail = el('section', { id: 'detail', class: 'detail', 'aria-label': 'Message detail', hidden: true, tabindex: '-1' });
  const next = el('button', { type: 'button', id: 'next-page', hidden: true }, 'Next page');
  const first = el('button', { type: 'button', id: 'first-page', hidden: true }, 'First page');
  const redriveSelected = el('button', { type: 'button', id: 'redrive-selected', disabled: true }, 'Redrive selected');
  const redriveFilter = el('a', { id: 'redrive-filter', class: 'button', href: queueHref(name, 'redrive') }, 'Redrive all matching');

  replace(
    root,
    el('p', { class: 'crumbs' }, el('a', { href: '#/queues' }, 'Queues'), ' / ', el('a', { href: queueHref(name) }, name), ' / '),
    el('h1', {}, `Messages of ${name}`),
    el('p', { class: 'muted' }, 'Peeked, not received: looking changes nothing.'),
    filterForm,
    status.node,
    el('div', { class: 'scroll' }, table),
    el('div', { class: 'toolbar' }, first, next, redriveSelected, redriveFilter),
    detail,
  );

  /** message id → peeked message, for the selection. */
  const selected = new Map();
  let token = null;

  const filters = () => ({ reason: reason.value.trim(), body: bodyText.value.trim() });

  function updateSelection() {
    redriveSelected.disabled = selected.size === 0;
    redriveSelected.textContent = selected.size ? `Redrive selected (${selected.size})` : 'Redrive selected';
    const f = filters();
    const q = new URLSearchParams();
    if (f.reason) q.set('reason', f.reason);
    if (f.body) q.set('body', f.body);
    redriveFilter.setAttribute('href', queueHref(name, 'redrive') + (q.size ? `?${q}` : ''));
  }

  async function load(pageToken) {
    status.info('Loading…');
    let page;
    try {
      page = await sluice('PeekMessages', {
        QueueUrl: url,
        MaxResults: PAGE_SIZE,
        ...filterInput(filters()),
        ...(pageToken ? { NextToken: pageToken } : {}),
      });
    } catch (err) {
      if (ctx.fail(err)) status.error(err);
      return;
    }
    const messages = page.Messages || [];
    token = page.NextToken || null;
    next.hidden = !token;
    first.hidden = !pageToken;
    tbody.replaceChildren(...messages.map(row));
    status.info(messages.length ? `${count(messages.length)} message${messages.length === 1 ? '' : 's'}${token ? ' (more on the next page)' : ''}.` : 'No messages match.');
    table.dataset.ready = 'true';
    updateSelection();
  }

  function row(m) {
    const box = el('input', { type: 'checkbox', id: `select-${m.MessageId}`, checked: selected.has(m.MessageId) });
    box.addEventListener('change', () => {
      if (box.checked) selected.set(m.MessageId, m);
      else selected.delete(m.MessageId);
      updateSelection();
    });
    const open = el('button', { type: 'button', class: 'link mono', onclick: () => showDetail(m) }, m.MessageId);
    const preview = m.Body.length > 80 ? `${m.Body.slice(0, 80)}…` : m.Body;
    return el(
      'tr',
      { dataset: { messageId: m.MessageId } },
      el('td', {}, el('label', { for: box.id, class: 'visually-hidden' }, `Select message ${m.MessageId}`), box),
      el('td', {}, open),
      el('td', {}, time(m.SentTimestamp)),
      el('td', {}, m.State),
      el('td', { class: 'num' }, count(m.ReceiveCount)),
      el('td', { dataset: { col: 'reason' } }, m.FailureReason || '—'),
      el('td', { class: 'mono body' }, preview),
    );
  }

  function showDetail(m) {
    const a = m.Attributes || {};
    const source = a.DeadLetterQueueSourceArn;
    const replays = m.MessageAttributes && m.MessageAttributes['sluice.replay-count'];
    const item = (label, value) => [el('dt', {}, label), el('dd', {}, value)];
    const userAttrs = Object.entries(m.MessageAttributes || {}).sort(([x], [y]) => x.localeCompare(y));
    replace(
      detail,
      el('div', { class: 'row spread' },
        el('h2', {}, 'Message ', el('code', {}, m.MessageId)),
        el('button', { type: 'button', onclick: () => { detail.hidden = true; } }, 'Close')),
      el('h3', {}, 'Provenance'),
      el('dl', { class: 'pairs', id: 'provenance' },
        item('Source queue', source ? el('a', { href: queueHref(queueName(source)) }, queueName(source)) : '—'),
        item('Failure reason', m.FailureReason || a['Sluice.LastFailureReason'] || '—'),
        item('Moved to this queue', time(a['Sluice.MovedAt'])),
        item('First received', time(m.FirstReceiveTimestamp || a['Sluice.FirstReceiveAt'])),
        item('Last received', time(m.LastReceiveTimestamp || a['Sluice.LastReceiveAt'])),
        item('Receives', count(m.ReceiveCount)),
        item('Replays', replays ? replays.StringValue : '0'),
        item('Sent', time(m.SentTimestamp)),
        item('State', m.State),
        m.MessageGroupId && item('Message group', m.MessageGroupId)),
      el('h3', {}, 'Body'),
      el('pre', { class: 'body', id: 'detail-body' }, prettyJson(m.Body)),
      el('h3', {}, 'Message attributes'),
      userAttrs.length
        ? el('table', {}, el('tbody', {}, userAttrs.map(([k, v]) => el('tr', {}, el('th', { scope: 'row' }, k), el('td', {}, v.DataType), el('td', { class: 'mono' }, v.StringValue ?? v.BinaryValue ?? '')))))
        : el('p', { class: 'muted' }, 'None.'),
      el('h3', {}, 'System attributes'),
      el('table', {}, el('tbody', {}, Object.entries(a).sort(([x], [y]) => x.localeCompare(y)).map(([k, v]) => el('tr', {}, el('th', { scope: 'row' }, k), el('td', { class: 'mono' }, v))))),
    );
    detail.hidden = false;
    detail.focus();
  }

  filterForm.addEventListener('submit', (event) => {
    event.preventDefault();
    selected.clear();
    load(null);
  });
  next.addEventListener('click', () => load(token));
  first.addEventListener('click', () => load(null));
  redriveSelected.addEventListener('click', () => {
    const messages = [...selected.values()].map((m) => ({ MessageId: m.MessageId, SentTimestamp: m.SentTimestamp, Body: m.Body, FailureReason: m.FailureReason || '' }));
    sessionStorage.setItem(SELECTION_KEY, JSON.stringify({ queue: name, messages }));
    location.hash = queueHref(name, 'redrive') + '?mode=selection';
  });
  await load(null);
  if (!ctx.live) return;
}
