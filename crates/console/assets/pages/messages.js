// A queue's messages (above all a DLQ's), read with PeekMessages: nothing
// is received, no receive count changes. Filtered by failure reason and
// class, body text, attribute, source queue and send time, paged; a message's detail
// shows its body (pretty JSON), attributes and provenance. Selected
// messages go to the redrive page; the matching ones export as JSON Lines.

import { queueAttributes, queueUrl, sluice, sqs } from '../api.js';
import { count, el, prettyJson, queueHref, queueName, replace, statusLine, time } from '../ui.js';

const PAGE_SIZE = 20;
/** Where the selection waits for the redrive page (this tab only). */
export const SELECTION_KEY = 'sluice.console.selection';

/** The query-string keys of the filters, as the messages and redrive pages share them. */
export const FILTER_KEYS = ['reason', 'class', 'body', 'attr', 'value', 'source', 'since', 'until'];

/**
 * The filter parameters of PeekMessages/RedriveMessages from the filters
 * ({reason, class, body, attr, value, source: an ARN, since/until: ms}).
 */
export function filterInput({ reason, class: failureClass, body, attr, value, source, since, until }) {
  const f = {};
  if (reason) f.FailureReasonContains = reason;
  if (failureClass) f.FailureClass = failureClass;
  if (body) f.BodyContains = body;
  if (attr || value) {
    f.AttributeName = attr || '';
    f.AttributeValue = value || '';
  }
  if (source) f.SourceQueueArn = source;
  if (since) f.SentAfter = Number(since);
  if (until) f.SentBefore = Number(until);
  return f;
}

/** A `datetime-local` input's value as ms since the epoch (local time), or ''. */
function localToMs(value) {
  const ms = value ? new Date(value).getTime() : NaN;
  return Number.isNaN(ms) ? '' : String(ms);
}

/** ms since the epoch as a `datetime-local` value (local time), or ''. */
function msToLocal(ms) {
  const n = Number(ms);
  if (!n) return '';
  const d = new Date(n - new Date(n).getTimezoneOffset() * 60000);
  return d.toISOString().slice(0, 19);
}

/** Every message matching `filter`, all pages of PeekMessages. */
async function peekAll(url, filter) {
  const all = [];
  let token = null;
  do {
    const page = await sluice('PeekMessages', { QueueUrl: url, MaxResults: 100, ...filter, ...(token ? { NextToken: token } : {}) });
    all.push(...(page.Messages || []));
    token = page.NextToken || null;
  } while (token);
  return all;
}

export async function render(root, { name, query }, ctx) {
  const url = await queueUrl(name);
  const [attrs, dlqSources] = await Promise.all([
    queueAttributes(url),
    sqs('ListDeadLetterSourceQueues', { QueueUrl: url, MaxResults: 1000 }),
  ]);
  const arnPrefix = String(attrs.QueueArn || '').slice(0, String(attrs.QueueArn || '').lastIndexOf(':') + 1);
  const status = statusLine();
  const input = (id, key, attrs = {}) => el('input', { id, type: 'search', value: query.get(key) || '', spellcheck: 'false', autocomplete: 'off', ...attrs });
  const reason = input('filter-reason', 'reason');
  const failureClass = input('filter-class', 'class');
  const bodyText = input('filter-body', 'body');
  const attrName = input('filter-attr', 'attr');
  const attrValue = input('filter-value', 'value');
  const sourceNames = (dlqSources.queueUrls || dlqSources.QueueUrls || []).map(queueName).sort();
  const wantedSource = query.get('source') || '';
  const source = el('select', { id: 'filter-source' },
    el('option', { value: '' }, '(any)'),
    sourceNames.map((s) => el('option', { value: `${arnPrefix}${s}`, selected: `${arnPrefix}${s}` === wantedSource }, s)),
    wantedSource && !sourceNames.some((s) => `${arnPrefix}${s}` === wantedSource) && el('option', { value: wantedSource, selected: true }, queueName(wantedSource)));
  const since = el('input', { id: 'filter-since', type: 'datetime-local', step: 1, value: msToLocal(query.get('since')) });
  const until = el('input', { id: 'filter-until', type: 'datetime-local', step: 1, value: msToLocal(query.get('until')) });
  const field = (id, label, node) => el('div', { class: 'field' }, el('label', { for: id }, label), node);
  const filterForm = el(
    'form',
    { id: 'filter', class: 'filters' },
    field('filter-reason', 'Failure reason contains', reason),
    field('filter-class', 'Failure class', failureClass),
    field('filter-body', 'Body contains', bodyText),
    field('filter-attr', 'Attribute name', attrName),
    field('filter-value', 'Attribute value', attrValue),
    field('filter-source', 'Source queue', source),
    field('filter-since', 'Sent from', since),
    field('filter-until', 'Sent before', until),
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
      el('th', { scope: 'col' }, 'Failure class'),
      el('th', { scope: 'col' }, 'Failure reason'),
      el('th', { scope: 'col' }, 'Body'))),
    tbody,
  );
  const detail = el('section', { id: 'detail', class: 'detail', 'aria-label': 'Message detail', hidden: true, tabindex: '-1' });
  const next = el('button', { type: 'button', id: 'next-page', hidden: true }, 'Next page');
  const first = el('button', { type: 'button', id: 'first-page', hidden: true }, 'First page');
  const redriveSelected = el('button', { type: 'button', id: 'redrive-selected', disabled: true }, 'Redrive selected');
  const redriveFilter = el('a', { id: 'redrive-filter', class: 'button', href: queueHref(name, 'redrive') }, 'Redrive all matching');
  const exportButton = el('button', { type: 'button', id: 'export' }, 'Export matching as JSON Lines');

  replace(
    root,
    el('p', { class: 'crumbs' }, el('a', { href: '#/queues' }, 'Queues'), ' / ', el('a', { href: queueHref(name) }, name), ' / '),
    el('h1', {}, `Messages of ${name}`),
    el('p', { class: 'muted' }, 'Peeked, not received: looking changes nothing.'),
    filterForm,
    status.node,
    el('div', { class: 'scroll' }, table),
    el('div', { class: 'toolbar' }, first, next, redriveSelected, redriveFilter, exportButton),
    detail,
  );

  /** message id → peeked message, for the selection. */
  const selected = new Map();
  let token = null;

  const filters = () => ({
    reason: reason.value.trim(),
    class: failureClass.value.trim(),
    body: bodyText.value.trim(),
    attr: attrName.value.trim(),
    value: attrValue.value,
    source: source.value,
    since: localToMs(since.value),
    until: localToMs(until.value),
  });

  function updateSelection() {
    redriveSelected.disabled = selected.size === 0;
    redriveSelected.textContent = selected.size ? `Redrive selected (${selected.size})` : 'Redrive selected';
    const f = filters();
    const q = new URLSearchParams();
    for (const key of FILTER_KEYS) if (f[key]) q.set(key, f[key]);
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
      el('td', { dataset: { col: 'class' } }, m.FailureClass || '—'),
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
        item('Failure class', m.FailureClass || a['Sluice.FailureClass'] || '—'),
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
  exportButton.addEventListener('click', async () => {
    exportButton.disabled = true;
    status.info('Exporting…');
    try {
      // The CLI's format (sluice dlq export): each message as PeekMessages shows it, one a line.
      const messages = await peekAll(url, filterInput(filters()));
      const text = messages.map((m) => `${JSON.stringify(m)}\n`).join('');
      const href = URL.createObjectURL(new Blob([text], { type: 'application/x-ndjson' }));
      const day = new Date().toISOString().slice(0, 10);
      const link = el('a', { href, download: `${name}-${day}.jsonl`, hidden: true });
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(href), 10000);
      status.ok(`Exported ${count(messages.length)} message${messages.length === 1 ? '' : 's'} to ${name}-${day}.jsonl.`);
    } catch (err) {
      if (ctx.fail(err)) status.error(err);
    } finally {
      exportButton.disabled = false;
    }
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
