// A queue's archive of expired messages (ListArchivedMessages): filtered
// as its messages are, paged, a message's detail with its provenance; the
// selected ones, or every one not restored yet, sent back with
// RestoreArchivedMessages to the queue or another one.

import { listQueueUrls, queueUrl, sluice } from '../api.js';
import { count, el, prettyJson, queueHref, queueName, replace, statusLine, time } from '../ui.js';
import { filterInput } from './messages.js';

const PAGE_SIZE = 20;

export async function render(root, { name, query }, ctx) {
  const url = await queueUrl(name);
  const queues = (await listQueueUrls()).map(queueName).sort();
  const status = statusLine();
  const input = (id, key) => el('input', { id, type: 'search', value: query.get(key) || '', spellcheck: 'false', autocomplete: 'off' });
  const reason = input('archive-reason', 'reason');
  const failureClass = input('archive-class', 'class');
  const bodyText = input('archive-body', 'body');
  const field = (id, label, node) => el('div', { class: 'field' }, el('label', { for: id }, label), node);
  const filterForm = el(
    'form',
    { id: 'archive-filter', class: 'filters' },
    field('archive-reason', 'Failure reason contains', reason),
    field('archive-class', 'Failure class', failureClass),
    field('archive-body', 'Body contains', bodyText),
    el('div', { class: 'field end' }, el('button', { type: 'submit' }, 'Search')),
  );
  const destination = el('select', { id: 'restore-to' }, queues.map((q) => el('option', { value: q, selected: q === name }, q)));
  const tbody = el('tbody');
  const table = el(
    'table',
    { id: 'archived', class: 'messages' },
    el('caption', { class: 'visually-hidden' }, `Archived messages of ${name}`),
    el('thead', {}, el('tr', {},
      el('th', { scope: 'col' }, el('span', { class: 'visually-hidden' }, 'Select')),
      el('th', { scope: 'col' }, 'Message ID'),
      el('th', { scope: 'col' }, 'Sent'),
      el('th', { scope: 'col' }, 'Archived'),
      el('th', { scope: 'col' }, 'Restored'),
      el('th', { scope: 'col', class: 'num' }, 'Receives'),
      el('th', { scope: 'col' }, 'Failure class'),
      el('th', { scope: 'col' }, 'Failure reason'),
      el('th', { scope: 'col' }, 'Body'))),
    tbody,
  );
  const detail = el('section', { id: 'archive-detail', class: 'detail', 'aria-label': 'Archived message', hidden: true, tabindex: '-1' });
  const next = el('button', { type: 'button', id: 'archive-next', hidden: true }, 'Next page');
  const first = el('button', { type: 'button', id: 'archive-first', hidden: true }, 'First page');
  const restoreSelected = el('button', { type: 'button', id: 'restore-selected', disabled: true }, 'Restore selected');
  const restoreAll = el('button', { type: 'button', id: 'restore-all' }, 'Restore all not yet restored');

  replace(
    root,
    el('p', { class: 'crumbs' }, el('a', { href: '#/queues' }, 'Queues'), ' / ', el('a', { href: queueHref(name) }, name), ' / '),
    el('h1', {}, `Archive of ${name}`),
    el('p', { class: 'muted' }, 'Messages that reached the queue\'s retention, kept by the archive. A restore sends a copy with its message id, marked as a replay; the archive keeps the message.'),
    filterForm,
    status.node,
    el('div', { class: 'scroll' }, table),
    el('div', { class: 'toolbar' }, first, next,
      el('label', { for: 'restore-to' }, 'Restore to '), destination, restoreSelected, restoreAll),
    detail,
  );

  const selected = new Set();
  let token = null;
  let pageToken = null;

  const filters = () => ({ reason: reason.value.trim(), class: failureClass.value.trim(), body: bodyText.value.trim() });

  function updateSelection() {
    restoreSelected.disabled = selected.size === 0;
    restoreSelected.textContent = selected.size ? `Restore selected (${selected.size})` : 'Restore selected';
  }

  async function load(from) {
    status.info('Loading…');
    let page;
    try {
      page = await sluice('ListArchivedMessages', {
        QueueUrl: url,
        MaxResults: PAGE_SIZE,
        ...filterInput(filters()),
        ...(from ? { NextToken: from } : {}),
      });
    } catch (err) {
      if (ctx.fail(err)) status.error(err);
      return;
    }
    pageToken = from;
    const messages = page.Messages || [];
    token = page.NextToken || null;
    next.hidden = !token;
    first.hidden = !from;
    tbody.replaceChildren(...messages.map(row));
    status.info(messages.length ? `${count(messages.length)} archived message${messages.length === 1 ? '' : 's'}${token ? ' (more on the next page)' : ''}.` : 'No archived messages match.');
    table.dataset.ready = 'true';
    updateSelection();
  }

  function row(m) {
    const box = el('input', { type: 'checkbox', id: `archived-${m.MessageId}`, checked: selected.has(m.MessageId) });
    box.addEventListener('change', () => {
      if (box.checked) selected.add(m.MessageId);
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
      el('td', { dataset: { col: 'archived' } }, time(m.ArchivedTimestamp)),
      el('td', { dataset: { col: 'restored' } }, m.RestoredTimestamp ? time(m.RestoredTimestamp) : '—'),
      el('td', { class: 'num' }, count(m.ReceiveCount)),
      el('td', { dataset: { col: 'class' } }, m.FailureClass || '—'),
      el('td', { dataset: { col: 'reason' } }, m.FailureReason || '—'),
      el('td', { class: 'mono body' }, preview),
    );
  }

  function showDetail(m) {
    const a = m.Attributes || {};
    const source = a.DeadLetterQueueSourceArn;
    const item = (label, value) => [el('dt', {}, label), el('dd', {}, value)];
    const userAttrs = Object.entries(m.MessageAttributes || {}).sort(([x], [y]) => x.localeCompare(y));
    replace(
      detail,
      el('div', { class: 'row spread' },
        el('h2', {}, 'Archived message ', el('code', {}, m.MessageId)),
        el('button', { type: 'button', onclick: () => { detail.hidden = true; } }, 'Close')),
      el('dl', { class: 'pairs', id: 'archive-provenance' },
        item('Source queue', source ? el('a', { href: queueHref(queueName(source)) }, queueName(source)) : '—'),
        item('Failure reason', m.FailureReason || '—'),
        item('Failure class', m.FailureClass || '—'),
        item('Receives', count(m.ReceiveCount)),
        item('Sent', time(m.SentTimestamp)),
        item('Archived', time(m.ArchivedTimestamp)),
        item('Restored', m.RestoredTimestamp ? time(m.RestoredTimestamp) : 'not since it was archived'),
        m.MessageGroupId && item('Message group', m.MessageGroupId)),
      el('h3', {}, 'Body'),
      el('pre', { class: 'body', id: 'archive-body-text' }, prettyJson(m.Body)),
      el('h3', {}, 'Message attributes'),
      userAttrs.length
        ? el('table', {}, el('tbody', {}, userAttrs.map(([k, v]) => el('tr', {}, el('th', { scope: 'row' }, k), el('td', {}, v.DataType), el('td', { class: 'mono' }, v.StringValue ?? v.BinaryValue ?? '')))))
        : el('p', { class: 'muted' }, 'None.'),
    );
    detail.hidden = false;
    detail.focus();
  }

  async function restore(ids, button) {
    button.disabled = true;
    status.info('Restoring…');
    try {
      const to = destination.value;
      const answer = await sluice('RestoreArchivedMessages', {
        QueueUrl: url,
        ...(ids ? { MessageIds: ids } : {}),
        ...(to && to !== name ? { DestinationQueueUrl: await queueUrl(to) } : {}),
      });
      const missing = (answer.NotFound || []).length;
      selected.clear();
      await load(pageToken);
      status.ok(`Restored ${count(answer.Restored)} message${answer.Restored === 1 ? '' : 's'} to ${to}${missing ? `; ${count(missing)} not found` : ''}.`);
    } catch (err) {
      if (ctx.fail(err)) status.error(err);
    } finally {
      button.disabled = false;
      updateSelection();
    }
  }

  filterForm.addEventListener('submit', (event) => {
    event.preventDefault();
    selected.clear();
    load(null);
  });
  next.addEventListener('click', () => load(token));
  first.addEventListener('click', () => load(null));
  restoreSelected.addEventListener('click', () => restore([...selected], restoreSelected));
  restoreAll.addEventListener('click', () => restore(null, restoreAll));
  await load(null);
}
