// Queues: every queue with its depths, DLQs marked with their sources;
// search, sort, and a refresh every few seconds that updates the cells in
// place (no flicker, focus and selection kept).

import { listQueueUrls, oldestAges, queueAttributes } from '../api.js';
import { count, duration, el, queueHref, queueName, replace, setText } from '../ui.js';

const REFRESH_MS = 3000;

const COLUMNS = [
  { key: 'name', label: 'Queue', numeric: false },
  { key: 'visible', label: 'Visible', numeric: true },
  { key: 'inFlight', label: 'In flight', numeric: true },
  { key: 'delayed', label: 'Delayed', numeric: true },
  { key: 'oldest', label: 'Oldest message', numeric: true },
  { key: 'role', label: 'Dead-letter', numeric: false },
];

/** Reads every queue: depths, redrive targets, and who redrives into whom. */
async function readQueues() {
  const urls = await listQueueUrls();
  const [attrs, ages] = await Promise.all([
    Promise.all(
      urls.map((url) =>
        queueAttributes(url).catch((err) => {
          // Deleted between the list and the read.
          if (err.code === 'QueueDoesNotExist' || err.code === 'AWS.SimpleQueueService.NonExistentQueue') return null;
          throw err;
        }),
      ),
    ),
    oldestAges(),
  ]);
  const queues = [];
  urls.forEach((url, i) => {
    if (!attrs[i]) return;
    const a = attrs[i];
    let target = null;
    try {
      if (a.RedrivePolicy) target = queueName(JSON.parse(a.RedrivePolicy).deadLetterTargetArn);
    } catch {
      target = null;
    }
    const name = queueName(url);
    queues.push({
      url,
      name,
      visible: Number(a.ApproximateNumberOfMessages),
      inFlight: Number(a.ApproximateNumberOfMessagesNotVisible),
      delayed: Number(a.ApproximateNumberOfMessagesDelayed),
      oldest: ages.has(name) ? ages.get(name) : null,
      target,
      sources: [],
    });
  });
  const byName = new Map(queues.map((q) => [q.name, q]));
  for (const q of queues) {
    if (q.target && byName.has(q.target)) byName.get(q.target).sources.push(q.name);
  }
  for (const q of queues) {
    q.sources.sort();
    q.role = q.sources.length ? `DLQ of ${q.sources.join(', ')}` : q.target ? `→ ${q.target}` : '';
  }
  return queues;
}

export async function render(root, _params, ctx) {
  const search = el('input', {
    id: 'queue-search',
    type: 'search',
    placeholder: 'name contains…',
    autocomplete: 'off',
    spellcheck: 'false',
  });
  const updated = el('span', { class: 'muted', id: 'queues-updated', 'aria-live': 'off' });
  const error = el('p', { class: 'status error', role: 'alert', hidden: true });
  const sort = { key: 'name', dir: 1 };
  const headRow = el('tr');
  const body = el('tbody');
  const table = el('table', { class: 'queues', id: 'queues' }, el('caption', { class: 'visually-hidden' }, 'Queues and their depths'), el('thead', {}, headRow), body);
  const empty = el('p', { class: 'muted', hidden: true }, 'No queues match.');
  replace(
    root,
    el('h1', {}, 'Queues'),
    el('div', { class: 'toolbar' }, el('label', { for: 'queue-search' }, 'Search'), search, updated),
    error,
    el('div', { class: 'scroll' }, table),
    empty,
  );

  const headers = COLUMNS.map((col) => {
    const th = el('th', { scope: 'col', class: col.numeric ? 'num' : null });
    const button = el('button', { type: 'button', class: 'sort', dataset: { key: col.key } }, col.label);
    button.addEventListener('click', () => {
      sort.dir = sort.key === col.key ? -sort.dir : col.numeric ? -1 : 1;
      sort.key = col.key;
      arrange();
    });
    th.append(button);
    headRow.append(th);
    return th;
  });

  /** url → {row, cells, queue} */
  const rows = new Map();
  let latest = [];

  function rowFor(q) {
    let entry = rows.get(q.url);
    if (!entry) {
      const cells = {};
      const row = el('tr', { dataset: { queue: q.name } });
      for (const col of COLUMNS) {
        const cell = el(col.key === 'name' ? 'th' : 'td', {
          class: col.numeric ? 'num' : null,
          scope: col.key === 'name' ? 'row' : null,
          dataset: { col: col.key },
        });
        cells[col.key] = cell;
        row.append(cell);
      }
      cells.name.append(el('a', { href: queueHref(q.name) }, q.name));
      entry = { row, cells, role: null };
      rows.set(q.url, entry);
    }
    entry.queue = q;
    setText(entry.cells.visible, count(q.visible));
    setText(entry.cells.inFlight, count(q.inFlight));
    setText(entry.cells.delayed, count(q.delayed));
    setText(entry.cells.oldest, q.oldest === null ? '—' : duration(q.oldest));
    if (entry.role !== q.role) {
      entry.role = q.role;
      replace(entry.cells.role, roleCell(q));
    }
    return entry;
  }

  function roleCell(q) {
    if (q.sources.length) {
      return [
        el('span', { class: 'badge dlq' }, 'DLQ'),
        ' of ',
        q.sources.flatMap((s, i) => [i ? ', ' : '', el('a', { href: queueHref(s) }, s)]),
        ' · ',
        el('a', { href: queueHref(q.name, 'messages') }, 'messages'),
      ];
    }
    if (q.target) return ['→ ', el('a', { href: queueHref(q.target) }, q.target)];
    return [];
  }

  function arrange() {
    const needle = search.value.trim().toLowerCase();
    const shown = latest.filter((q) => q.name.toLowerCase().includes(needle));
    const value = (q) => (sort.key === 'role' ? q.role : q[sort.key]);
    shown.sort((a, b) => {
      const x = value(a);
      const y = value(b);
      const c = typeof x === 'string' ? x.localeCompare(y) : (x ?? -1) - (y ?? -1);
      return (c || a.name.localeCompare(b.name)) * sort.dir;
    });
    const wanted = shown.map((q) => rowFor(q).row);
    // Move rows only when the order changed: no flicker on a refresh.
    const same = wanted.length === body.children.length && wanted.every((r, i) => body.children[i] === r);
    if (!same) body.replaceChildren(...wanted);
    empty.hidden = wanted.length > 0;
    headers.forEach((th, i) => {
      const key = COLUMNS[i].key;
      if (key === sort.key) th.setAttribute('aria-sort', sort.dir > 0 ? 'ascending' : 'descending');
      else th.removeAttribute('aria-sort');
    });
  }

  async function refresh() {
    try {
      latest = await readQueues();
      error.hidden = true;
    } catch (err) {
      if (!ctx.fail(err)) return;
      error.hidden = false;
      setText(error, `Could not read the queues: ${err.code || ''} ${err.message}`);
      return;
    }
    const urls = new Set(latest.map((q) => q.url));
    for (const url of [...rows.keys()]) if (!urls.has(url)) rows.delete(url);
    arrange();
    setText(updated, `Updated ${new Date().toLocaleTimeString('en-GB', { hour12: false })}`);
    table.dataset.ready = 'true';
  }

  search.addEventListener('input', arrange);
  await refresh();
  ctx.every(REFRESH_MS, refresh);
}
