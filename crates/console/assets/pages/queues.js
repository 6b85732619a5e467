// Queues: every queue with its depths, rates, a sparkline of its depth over
// the last hour (the server's samples, then the page's own), the state of
// its alarms, DLQs marked with their sources; search, sort, and a refresh
// every few seconds that updates the cells in place (no flicker, focus and
// selection kept).

import { listQueueUrls, queueAttributes, queueMetrics, sluice } from '../api.js';
import { sparkline } from '../sparkline.js';
import { count, duration, el, queueHref, queueName, replace, setText } from '../ui.js';

const REFRESH_MS = 3000;
/** How much depth history a sparkline shows: the last hour. */
const HISTORY_MS = 3600 * 1000;
/** Alarm states, worst first: a queue shows its worst alarm's. */
const ALARM_STATES = ['ALARM', 'INSUFFICIENT_DATA', 'OK'];
const STATE_CLASS = { ALARM: 'state alarm', OK: 'state ok', INSUFFICIENT_DATA: 'state unknown' };

const COLUMNS = [
  { key: 'name', label: 'Queue', numeric: false },
  { key: 'visible', label: 'Visible', numeric: true },
  { key: 'trend', label: 'Visible, last hour', numeric: false, sortable: false },
  { key: 'inFlight', label: 'In flight', numeric: true },
  { key: 'delayed', label: 'Delayed', numeric: true },
  { key: 'oldest', label: 'Oldest message', numeric: true },
  { key: 'sent', label: 'Sent/s', numeric: true },
  { key: 'received', label: 'Received/s', numeric: true },
  { key: 'deleted', label: 'Deleted/s', numeric: true },
  { key: 'alarm', label: 'Alarms', numeric: false },
  { key: 'role', label: 'Dead-letter', numeric: false },
];

/** A counter's rate per second between two scrapes, or null (no earlier scrape, a restart). */
function rate(now, before, key, seconds) {
  if (!now || !before || now[key] === undefined || before[key] === undefined || seconds <= 0) return null;
  const delta = now[key] - before[key];
  return delta < 0 ? null : delta / seconds;
}

/** A rate per second, shortly: `—`, `0/s`, `0.3/s`, `12/s`. */
function perSecond(r) {
  if (r === null || r === undefined) return '—';
  if (r === 0) return '0/s';
  return r < 10 ? `${r.toFixed(1)}/s` : `${Math.round(r).toLocaleString('en')}/s`;
}

/**
 * Reads every queue: depths, redrive targets, who redrives into whom, and
 * the rates since `previous` (the last scrape of /metrics); returns the
 * queues and this scrape.
 */
async function readQueues(previous) {
  const urls = await listQueueUrls();
  const [attrs, metrics, alarms] = await Promise.all([
    Promise.all(
      urls.map((url) =>
        queueAttributes(url).catch((err) => {
          // Deleted between the list and the read.
          if (err.code === 'QueueDoesNotExist' || err.code === 'AWS.SimpleQueueService.NonExistentQueue') return null;
          throw err;
        }),
      ),
    ),
    queueMetrics(),
    alarmStates(),
  ]);
  const seconds = previous ? (metrics.at - previous.at) / 1000 : 0;
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
    const m = metrics.byQueue.get(name);
    const before = previous && previous.byQueue.get(name);
    queues.push({
      url,
      name,
      visible: Number(a.ApproximateNumberOfMessages),
      inFlight: Number(a.ApproximateNumberOfMessagesNotVisible),
      delayed: Number(a.ApproximateNumberOfMessagesDelayed),
      oldest: m && m.oldest !== undefined ? m.oldest : null,
      sent: rate(m, before, 'sent', seconds),
      received: rate(m, before, 'received', seconds),
      deleted: rate(m, before, 'deleted', seconds),
      target,
      sources: [],
      alarm: alarms.get(name) || null,
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
  return { queues, metrics };
}

/**
 * By queue name, the worst state of its alarms and how many it has:
 * {state, count}; an empty map when the alarms cannot be read (a key that
 * may not call DescribeAlarms still sees its queues).
 */
async function alarmStates() {
  const byQueue = new Map();
  let out;
  try {
    out = await sluice('DescribeAlarms', {});
  } catch {
    return byQueue;
  }
  for (const a of out.Alarms || []) {
    const now = byQueue.get(a.QueueName) || { state: 'OK', count: 0 };
    now.count++;
    if (ALARM_STATES.indexOf(a.StateValue) < ALARM_STATES.indexOf(now.state)) now.state = a.StateValue;
    byQueue.set(a.QueueName, now);
  }
  return byQueue;
}

/** url → [{t, v}]: the visible messages the server sampled over the last hour. */
async function serverHistory() {
  const byUrl = new Map();
  try {
    const out = await sluice('GetDepthHistory', {});
    for (const q of out.Queues || []) {
      byUrl.set(q.QueueUrl, (q.Samples || []).map((s) => ({ t: Number(s.Timestamp), v: Number(s.Visible) })));
    }
  } catch {
    // The page's own samples still draw a line.
  }
  return byUrl;
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
    if (col.sortable === false) {
      th.append(col.label);
      headRow.append(th);
      return th;
    }
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

  /** url → {row, cells, queue, spark, alarm} */
  const rows = new Map();
  let latest = [];
  /** The last scrape of /metrics, for the rates. */
  let scrape = null;
  /**
   * queue url → [{t, v}]: visible messages over the last hour, the
   * server's samples (every 30 s) then the page's own at each refresh.
   */
  const history = await serverHistory();

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
      const spark = sparkline();
      cells.trend.append(spark.node);
      entry = { row, cells, role: null, alarm: undefined, spark };
      rows.set(q.url, entry);
    }
    entry.queue = q;
    setText(entry.cells.visible, count(q.visible));
    setText(entry.cells.inFlight, count(q.inFlight));
    setText(entry.cells.delayed, count(q.delayed));
    setText(entry.cells.oldest, q.oldest === null ? '—' : duration(q.oldest));
    setText(entry.cells.sent, perSecond(q.sent));
    setText(entry.cells.received, perSecond(q.received));
    setText(entry.cells.deleted, perSecond(q.deleted));
    const samples = history.get(q.url);
    if (samples && samples.length) {
      entry.spark.update(samples, (first, last, max) =>
        `Visible messages over the last ${duration((last.t - first.t) / 1000)}: from ${count(first.v)} to ${count(last.v)}, at most ${count(max)}`);
    }
    if (entry.role !== q.role) {
      entry.role = q.role;
      replace(entry.cells.role, roleCell(q));
    }
    const alarm = q.alarm ? `${q.alarm.state} ${q.alarm.count}` : '';
    if (entry.alarm !== alarm) {
      entry.alarm = alarm;
      replace(entry.cells.alarm, alarmCell(q.alarm));
    }
    return entry;
  }

  function alarmCell(alarm) {
    if (!alarm) return [];
    const label = alarm.count === 1 ? 'its alarm' : `the worst of its ${alarm.count} alarms`;
    return el('a', { href: '#/alarms', class: STATE_CLASS[alarm.state] || 'state', title: `State of ${label}` }, alarm.state);
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
    const value = (q) => {
      if (sort.key === 'role') return q.role;
      if (sort.key === 'alarm') return q.alarm ? ALARM_STATES.length - ALARM_STATES.indexOf(q.alarm.state) : -1;
      return q[sort.key];
    };
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
      const read = await readQueues(scrape);
      latest = read.queues;
      scrape = read.metrics;
      error.hidden = true;
    } catch (err) {
      if (!ctx.fail(err)) return;
      error.hidden = false;
      setText(error, `Could not read the queues: ${err.code || ''} ${err.message}`);
      return;
    }
    const urls = new Set(latest.map((q) => q.url));
    for (const url of [...rows.keys()]) if (!urls.has(url)) rows.delete(url);
    for (const url of [...history.keys()]) if (!urls.has(url)) history.delete(url);
    const now = Date.now();
    for (const q of latest) {
      if (!history.has(q.url)) history.set(q.url, []);
      const samples = history.get(q.url);
      samples.push({ t: now, v: q.visible });
      while (samples.length && samples[0].t < now - HISTORY_MS) samples.shift();
    }
    arrange();
    setText(updated, `Updated ${new Date().toLocaleTimeString('en-GB', { hour12: false })}`);
    table.dataset.ready = 'true';
  }

  search.addEventListener('input', arrange);
  await refresh();
  ctx.every(REFRESH_MS, refresh);
}
