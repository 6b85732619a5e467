// Redrive a DLQ's messages back to their sources: chosen by a filter or
// by selection on the messages page; a dry run first (would move, would
// be refused and why), then the real run behind a confirmation.

import { queueUrl, sluice } from '../api.js';
import { count, el, queueHref, queueName, replace, statusLine, time } from '../ui.js';
import { SELECTION_KEY, filterInput } from './messages.js';

/** Selected messages of `name` kept by the messages page, or []. */
function selection(name) {
  try {
    const kept = JSON.parse(sessionStorage.getItem(SELECTION_KEY) || 'null');
    return kept && kept.queue === name ? kept.messages : [];
  } catch {
    return [];
  }
}

/**
 * Redrives one selected message: RedriveMessages has no id filter, so the
 * filter pins the message by its send time (to the ms) and whole body, and
 * the answer's MessageIds says whether it was this one.
 */
async function redriveOne(url, m, common, dryRun) {
  const out = await sluice('RedriveMessages', {
    QueueUrl: url,
    SentAfter: m.SentTimestamp,
    SentBefore: m.SentTimestamp + 1,
    BodyContains: m.Body,
    MaxMessages: 1,
    DryRun: dryRun,
    ...common,
  });
  const ids = out.MessageIds || [];
  if (ids.includes(m.MessageId)) return { id: m.MessageId, outcome: 'move' };
  if (out.Refused) return { id: m.MessageId, outcome: 'refused', why: out.Reason || 'refused' };
  if (out.Unmovable) return { id: m.MessageId, outcome: 'unmovable', why: out.Reason || 'nowhere to go' };
  if (ids.length) return { id: m.MessageId, outcome: 'skipped', why: 'another message has the same body and send time; redrive it with a filter' };
  return { id: m.MessageId, outcome: 'skipped', why: 'no longer in this queue' };
}

export async function render(root, { name, query }, ctx) {
  const url = await queueUrl(name);
  const chosen = selection(name);
  const useSelection = query.get('mode') === 'selection' && chosen.length > 0;
  const status = statusLine();
  const result = el('section', { id: 'redrive-result', 'aria-live': 'polite', class: 'result' });

  const modeSelection = el('input', { type: 'radio', name: 'mode', id: 'mode-selection', value: 'selection', checked: useSelection, disabled: chosen.length === 0 });
  const modeFilter = el('input', { type: 'radio', name: 'mode', id: 'mode-filter', value: 'filter', checked: !useSelection });
  const reason = el('input', { id: 'redrive-reason', type: 'search', value: query.get('reason') || '', spellcheck: 'false' });
  const bodyText = el('input', { id: 'redrive-body', type: 'search', value: query.get('body') || '', spellcheck: 'false' });
  // The messages page's other filters, carried by "Redrive all matching".
  const extra = Object.fromEntries(['class', 'attr', 'value', 'source', 'since', 'until'].filter((k) => query.get(k)).map((k) => [k, query.get(k)]));
  const extraWords = [
    extra.class && `whose last failure was of class ${extra.class}`,
    (extra.attr || extra.value) && `with the attribute ${extra.attr || ''} = "${extra.value || ''}"`,
    extra.source && `dead-lettered from ${queueName(extra.source)}`,
    extra.since && `sent at or after ${time(extra.since)}`,
    extra.until && `sent before ${time(extra.until)}`,
  ].filter(Boolean);
  const max = el('input', { id: 'redrive-max', type: 'number', min: 1, max: 1000, value: 100 });
  const maxReplays = el('input', { id: 'redrive-max-replays', type: 'number', min: 1, max: 1000, value: 3 });
  const destination = el('input', { id: 'redrive-destination', type: 'text', placeholder: "each message's source", spellcheck: 'false' });
  const dryRun = el('button', { type: 'submit', id: 'dry-run' }, 'Dry run');
  const confirm = el('button', { type: 'button', id: 'confirm-redrive', class: 'primary', disabled: true }, 'Redrive');

  const form = el(
    'form',
    { id: 'redrive', class: 'stack' },
    el('fieldset', {},
      el('legend', {}, 'Which messages'),
      el('div', { class: 'choice' }, modeSelection, el('label', { for: 'mode-selection' }, `The ${count(chosen.length)} selected on the messages page`)),
      chosen.length > 0 && el('ul', { class: 'mono small', id: 'selected-ids' }, chosen.map((m) => el('li', {}, m.MessageId, m.FailureReason ? ` (${m.FailureReason})` : ''))),
      el('div', { class: 'choice' }, modeFilter, el('label', { for: 'mode-filter' }, 'Every message matching a filter')),
      el('div', { class: 'filters' },
        el('div', { class: 'field' }, el('label', { for: 'redrive-reason' }, 'Failure reason contains'), reason),
        el('div', { class: 'field' }, el('label', { for: 'redrive-body' }, 'Body contains'), bodyText),
        el('div', { class: 'field' }, el('label', { for: 'redrive-max' }, 'At most (1–1,000)'), max)),
      extraWords.length > 0 && el('p', { id: 'redrive-extra' }, `And only messages ${extraWords.join(', ')} (the messages page's filter).`)),
    el('div', { class: 'filters' },
      el('div', { class: 'field' }, el('label', { for: 'redrive-destination' }, 'Destination queue ARN (optional)'), destination),
      el('div', { class: 'field' }, el('label', { for: 'redrive-max-replays' }, 'Refuse messages replayed this many times'), maxReplays)),
    el('div', { class: 'row' }, dryRun, confirm),
    status.node,
  );

  replace(
    root,
    el('p', { class: 'crumbs' }, el('a', { href: '#/queues' }, 'Queues'), ' / ', el('a', { href: queueHref(name) }, name), ' / '),
    el('h1', {}, `Redrive ${name}`),
    el('p', {}, 'Moves messages of this dead-letter queue back to the queues they failed in (or to a destination). Each moved message gets a new ID and a replay count. Run a dry run first: nothing moves until you confirm.'),
    form,
    result,
  );

  /** The inputs of the last dry run; any change asks for a new one. */
  let planned = null;
  const inputs = () => JSON.stringify([modeSelection.checked, reason.value, bodyText.value, max.value, maxReplays.value, destination.value]);
  form.addEventListener('input', () => {
    if (planned && planned.key !== inputs()) {
      planned = null;
      confirm.disabled = true;
      confirm.textContent = 'Redrive';
    }
  });

  const common = () => {
    const c = { MaxReplays: Number(maxReplays.value) || 3 };
    if (destination.value.trim()) c.DestinationArn = destination.value.trim();
    return c;
  };

  async function run(dry) {
    if (modeSelection.checked) {
      const todo = dry ? chosen : chosen.filter((m) => planned.moving.has(m.MessageId));
      const outcomes = [];
      for (const m of todo) outcomes.push(await redriveOne(url, m, common(), dry));
      return outcomes;
    }
    const out = await sluice('RedriveMessages', {
      QueueUrl: url,
      MaxMessages: Number(max.value) || 100,
      DryRun: dry,
      ...filterInput({ ...extra, reason: reason.value.trim(), body: bodyText.value.trim() }),
      ...common(),
    });
    const outcomes = (out.MessageIds || []).map((id) => ({ id, outcome: 'move' }));
    if (out.Refused) outcomes.push({ id: `${count(out.Refused)} message(s)`, outcome: 'refused', why: out.Reason || 'refused' });
    if (out.Unmovable) outcomes.push({ id: `${count(out.Unmovable)} message(s)`, outcome: 'unmovable', why: out.Reason || 'nowhere to go' });
    return outcomes;
  }

  function show(outcomes, dry) {
    const moving = outcomes.filter((o) => o.outcome === 'move');
    const others = outcomes.filter((o) => o.outcome !== 'move');
    const verb = dry ? 'Would move' : 'Moved';
    replace(
      result,
      el('h2', {}, dry ? 'Dry run' : 'Result'),
      el('p', { id: dry ? 'would-move' : 'moved', class: 'big' }, `${verb}: ${count(moving.length)}`),
      moving.length > 0 && el('ul', { class: 'mono small' }, moving.map((o) => el('li', {}, o.id))),
      el('p', { id: dry ? 'would-refuse' : 'refused', class: 'big' }, `${dry ? 'Would not move' : 'Not moved'}: ${count(others.length)}`),
      others.length > 0 && el('ul', { class: 'small', id: 'refusals' }, others.map((o) => el('li', {}, el('span', { class: 'mono' }, o.id), ` (${o.outcome}): ${o.why}`))),
      !dry && el('p', {}, el('a', { href: queueHref(name, 'messages') }, 'Back to the messages'), ' · ', el('a', { href: '#/queues' }, 'Queues')),
    );
  }

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (modeSelection.checked && chosen.length === 0) return;
    status.info('Dry run…');
    confirm.disabled = true;
    try {
      const outcomes = await run(true);
      show(outcomes, true);
      const moving = new Set(outcomes.filter((o) => o.outcome === 'move').map((o) => o.id));
      planned = { key: inputs(), moving };
      confirm.disabled = moving.size === 0;
      confirm.textContent = `Redrive ${count(moving.size)} message${moving.size === 1 ? '' : 's'}`;
      status.ok('Dry run done: nothing moved yet.');
    } catch (err) {
      if (ctx.fail(err)) status.error(err);
    }
  });

  confirm.addEventListener('click', async () => {
    if (!planned) return;
    confirm.disabled = true;
    status.info('Redriving…');
    try {
      const outcomes = await run(false);
      planned = null;
      show(outcomes, false);
      if (modeSelection.checked) sessionStorage.removeItem(SELECTION_KEY);
      status.ok('Redrive done.');
    } catch (err) {
      if (ctx.fail(err)) status.error(err);
    }
  });
}
