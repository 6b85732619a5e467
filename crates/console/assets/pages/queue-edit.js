// A queue's settings edited: its attributes, its redrive policy and its
// redrive allow policy, each a small form sent as SetQueueAttributes. The
// server validates (as it does for any client) and its error is shown
// inline, under the form that caused it.

import { listQueueUrls, queueAttributes, sqs } from '../api.js';
import { el, queueName, statusLine } from '../ui.js';

const EDITABLE = [
  { key: 'VisibilityTimeout', label: 'Visibility timeout (seconds)' },
  { key: 'MessageRetentionPeriod', label: 'Retention period (seconds)' },
  { key: 'DelaySeconds', label: 'Delivery delay (seconds)' },
  { key: 'ReceiveMessageWaitTimeSeconds', label: 'Receive wait time (seconds)' },
  { key: 'MaximumMessageSize', label: 'Maximum message size (bytes)' },
];

/**
 * The edit section of the queue at `url` with attributes `attrs`;
 * `onSaved(freshAttrs)` runs after each successful change.
 */
export function editSection(url, attrs, onSaved) {
  const arnPrefix = String(attrs.QueueArn || '').slice(0, String(attrs.QueueArn || '').lastIndexOf(':') + 1);
  const current = { ...attrs };

  /** A form that sends `collect()`'s attributes and reports the outcome. */
  function form(id, title, fields, collect) {
    const status = statusLine();
    const f = el('form', { id, class: 'stack edit', novalidate: true },
      el('h3', {}, title), fields, el('div', {}, el('button', { type: 'submit' }, 'Save')), status.node);
    f.addEventListener('submit', async (event) => {
      event.preventDefault();
      let changes;
      try {
        changes = collect();
      } catch (err) {
        status.error(err);
        return;
      }
      if (!Object.keys(changes).length) {
        status.info('Nothing changed.');
        return;
      }
      const button = f.querySelector('button[type="submit"]');
      button.disabled = true;
      try {
        await sqs('SetQueueAttributes', { QueueUrl: url, Attributes: changes });
        Object.assign(current, await queueAttributes(url));
        status.ok(`Saved: ${Object.keys(changes).join(', ')}.`);
        onSaved(current);
      } catch (err) {
        status.error(err);
      } finally {
        button.disabled = false;
      }
    });
    return f;
  }

  const field = (id, label, input) => el('div', { class: 'field' }, el('label', { for: id }, label), input);

  // Plain text inputs: the server, not the browser, says what is valid.
  const inputs = EDITABLE.filter((a) => a.key in attrs).map((a) => ({
    ...a,
    input: el('input', { id: `edit-${a.key}`, value: attrs[a.key], inputmode: 'numeric', autocomplete: 'off', spellcheck: 'false' }),
  }));
  const attributesForm = form('edit-attributes', 'Attributes', el('div', { class: 'filters' }, inputs.map((a) => field(a.input.id, a.label, a.input))), () => {
    const changes = {};
    for (const a of inputs) {
      const value = a.input.value.trim();
      if (value !== String(current[a.key])) changes[a.key] = value;
    }
    return changes;
  });

  let policy = {};
  try {
    policy = attrs.RedrivePolicy ? JSON.parse(attrs.RedrivePolicy) : {};
  } catch {
    policy = {};
  }
  const target = el('select', { id: 'edit-dlq' }, el('option', { value: '' }, '(none: no dead-letter queue)'));
  const targetName = policy.deadLetterTargetArn ? queueName(policy.deadLetterTargetArn) : '';
  if (targetName) target.append(el('option', { value: policy.deadLetterTargetArn, selected: true }, targetName));
  // The other queues as candidates, filled in when the list arrives.
  listQueueUrls()
    .then((urls) => {
      for (const name of urls.map(queueName).sort()) {
        if (name === targetName || `${arnPrefix}${name}` === attrs.QueueArn) continue;
        target.append(el('option', { value: `${arnPrefix}${name}` }, name));
      }
    })
    .catch(() => {});
  const maxReceives = el('input', { id: 'edit-max-receive-count', value: policy.maxReceiveCount ?? 5, inputmode: 'numeric', autocomplete: 'off' });
  const redriveForm = form('edit-redrive', 'Redrive policy',
    el('div', { class: 'filters' }, field('edit-dlq', 'Dead-letter queue', target), field('edit-max-receive-count', 'Receives before it moves (maxReceiveCount)', maxReceives)),
    () => {
      if (!target.value) return current.RedrivePolicy ? { RedrivePolicy: '' } : {};
      const n = Number(maxReceives.value.trim());
      const value = JSON.stringify({ deadLetterTargetArn: target.value, maxReceiveCount: Number.isInteger(n) ? n : maxReceives.value.trim() });
      return value === current.RedrivePolicy ? {} : { RedrivePolicy: value };
    });

  let allow = {};
  try {
    allow = attrs.RedriveAllowPolicy ? JSON.parse(attrs.RedriveAllowPolicy) : {};
  } catch {
    allow = {};
  }
  const permission = el('select', { id: 'edit-redrive-permission' },
    ['allowAll', 'denyAll', 'byQueue'].map((p) => el('option', { value: p, selected: (allow.redrivePermission || 'allowAll') === p }, p)));
  const sourcesInput = el('textarea', { id: 'edit-source-arns', rows: 2, spellcheck: 'false' }, (allow.sourceQueueArns || []).join('\n'));
  const allowForm = form('edit-allow', 'Redrive allow policy (which queues may use this one as their DLQ)',
    el('div', { class: 'filters' },
      field('edit-redrive-permission', 'Permission', permission),
      field('edit-source-arns', 'Source queue ARNs (byQueue; one a line, at most 10)', sourcesInput)),
    () => {
      const out = { redrivePermission: permission.value };
      if (permission.value === 'byQueue') out.sourceQueueArns = sourcesInput.value.split(/\s+/).filter(Boolean);
      const value = JSON.stringify(out);
      return value === current.RedriveAllowPolicy ? {} : { RedriveAllowPolicy: value };
    });

  return el('section', { 'aria-labelledby': 'h-edit' }, el('h2', { id: 'h-edit' }, 'Change settings'), attributesForm, redriveForm, allowForm);
}
