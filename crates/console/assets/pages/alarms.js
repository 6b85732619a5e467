// Alarms: every alarm with its state, metric, queue, threshold and the
// history of its state changes (DescribeAlarms), refreshed in place.

import { sluice } from '../api.js';
import { el, queueHref, replace, setText, time } from '../ui.js';

const REFRESH_MS = 3000;

const COMPARISONS = {
  GreaterThanOrEqualToThreshold: '≥',
  GreaterThanThreshold: '>',
  LessThanThreshold: '<',
  LessThanOrEqualToThreshold: '≤',
};

const STATE_CLASS = { ALARM: 'state alarm', OK: 'state ok', INSUFFICIENT_DATA: 'state unknown' };

/** `Maximum of ApproximateNumberOfMessagesVisible ≥ 1 over 1 × 60 s`. */
function condition(a) {
  const periods = a.DatapointsToAlarm && a.DatapointsToAlarm !== a.EvaluationPeriods
    ? `${a.DatapointsToAlarm} of ${a.EvaluationPeriods}`
    : `${a.EvaluationPeriods}`;
  return `${COMPARISONS[a.ComparisonOperator] || a.ComparisonOperator} ${a.Threshold} over ${periods} × ${a.Period} s`;
}

export async function render(root, _params, ctx) {
  const updated = el('span', { class: 'muted', id: 'alarms-updated', 'aria-live': 'off' });
  const error = el('p', { class: 'status error', role: 'alert', hidden: true });
  const body = el('tbody');
  const heads = ['Alarm', 'State', 'Queue', 'Metric', 'Threshold', 'Defined in', 'Since'];
  const table = el(
    'table',
    { id: 'alarms', class: 'alarms' },
    el('caption', { class: 'visually-hidden' }, 'Alarms and their states'),
    el('thead', {}, el('tr', {}, heads.map((h) => el('th', { scope: 'col' }, h)))),
    body,
  );
  const empty = el('p', { class: 'muted', hidden: true, id: 'alarms-empty' },
    'No alarms. Define them in the config file, with [dlq_alarms], or with Sluice.PutAlarm (see docs/alarms.md).');
  replace(
    root,
    el('h1', {}, 'Alarms'),
    el('div', { class: 'toolbar' }, el('a', { href: '#/doctor' }, 'Doctor findings'), updated),
    error,
    el('div', { class: 'scroll' }, table),
    empty,
  );

  /** name → {row, history row, cells, key of the history shown} */
  const rows = new Map();

  function rowFor(a) {
    let entry = rows.get(a.AlarmName);
    if (!entry) {
      const cells = {};
      const row = el('tr', { dataset: { alarm: a.AlarmName } });
      for (const key of ['name', 'state', 'queue', 'metric', 'threshold', 'source', 'since']) {
        cells[key] = el(key === 'name' ? 'th' : 'td', { scope: key === 'name' ? 'row' : null, dataset: { col: key } });
        row.append(cells[key]);
      }
      cells.stateBadge = el('span');
      cells.state.append(cells.stateBadge);
      cells.queueLink = el('a');
      cells.queue.append(cells.queueLink);
      const list = el('ol', { class: 'history' });
      const details = el('details', { class: 'history' }, el('summary', {}, 'History'), el('p', { class: 'reason' }), list);
      const historyRow = el('tr', { class: 'history-row', dataset: { historyOf: a.AlarmName } }, el('td', { colspan: heads.length }, details));
      entry = { row, historyRow, cells, details, list, shown: null };
      rows.set(a.AlarmName, entry);
    }
    const c = entry.cells;
    setText(c.name, a.AlarmName);
    setText(c.stateBadge, a.StateValue);
    if (c.stateBadge.className !== STATE_CLASS[a.StateValue]) c.stateBadge.className = STATE_CLASS[a.StateValue] || 'state';
    setText(c.queueLink, a.QueueName);
    if (c.queueLink.getAttribute('href') !== queueHref(a.QueueName)) c.queueLink.setAttribute('href', queueHref(a.QueueName));
    setText(c.metric, `${a.Statistic} of ${a.MetricName}`);
    setText(c.threshold, condition(a));
    setText(c.source, a.Source);
    setText(c.since, time(a.StateUpdatedTimestamp));
    setText(entry.details.querySelector('.reason'), a.StateReason ? `Why: ${a.StateReason}` : '');
    const history = a.History || [];
    const key = `${history.length}:${history[0] ? history[0].Timestamp : ''}`;
    // Rebuilt only when a change came in: an open history stays open and still.
    if (entry.shown !== key) {
      entry.shown = key;
      const summary = entry.details.querySelector('summary');
      setText(summary, `History (${history.length} change${history.length === 1 ? '' : 's'})`);
      replace(
        entry.list,
        history.length
          ? history.map((h) =>
              el('li', {}, el('time', {}, time(h.Timestamp)), ' ', h.OldState, ' → ', el('strong', {}, h.NewState), ': ', h.Reason))
          : el('li', { class: 'muted' }, 'No state change yet.'),
      );
    }
    return entry;
  }

  async function refresh() {
    let alarms;
    try {
      alarms = (await sluice('DescribeAlarms', {})).Alarms || [];
      error.hidden = true;
    } catch (err) {
      if (!ctx.fail(err)) return;
      error.hidden = false;
      setText(error, `Could not read the alarms: ${err.code || ''} ${err.message}`);
      return;
    }
    const names = new Set(alarms.map((a) => a.AlarmName));
    for (const name of [...rows.keys()]) if (!names.has(name)) rows.delete(name);
    const wanted = alarms.flatMap((a) => {
      const entry = rowFor(a);
      return [entry.row, entry.historyRow];
    });
    const same = wanted.length === body.children.length && wanted.every((r, i) => body.children[i] === r);
    if (!same) body.replaceChildren(...wanted);
    empty.hidden = alarms.length > 0;
    setText(updated, `Updated ${new Date().toLocaleTimeString('en-GB', { hour12: false })}`);
    table.dataset.ready = 'true';
  }

  await refresh();
  ctx.every(REFRESH_MS, refresh);
}
