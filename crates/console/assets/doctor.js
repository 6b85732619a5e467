// The checks of `sluice doctor` (docs/doctor.md) that can be computed from
// the queues' attributes, tags and alarms, as the CLI computes them: the
// same ids, severities, problems and fixes. Pure functions, no DOM.

const MAX_RETENTION = 1209600;
/** The queue tag declaring the consumer's timeout (docs/doctor.md). */
export const CONSUMER_TIMEOUT_TAG = 'sluice:consumer-timeout-seconds';

/** The checks the console computes, in the CLI's order. */
export const CHECKS = ['dlq-missing', 'dlq-retention', 'max-receive-count', 'redrive-policy', 'visibility-timeout', 'fifo-ordering', 'dlq-alarm'];
/** The checks only `sluice doctor` runs, and why. */
export const CLI_ONLY = {
  'dlq-expiring': "reads every DLQ message's age (a full peek of each DLQ)",
  'inflight-limit': 'compares in-flight counts with the 120,000 limit over time',
  'consumer-visibility': "reads the push consumers' settings from the config file",
  'consumer-batch-failures': "reads the push consumers' settings from the config file",
  'consumer-dlq': "reads the push consumers' settings from the config file",
  'subscription-queue-policy': 'reads the topics and their subscriptions (Sluice.DescribeTopics)',
  'subscription-dlq': 'reads the topics and their subscriptions (Sluice.DescribeTopics)',
  'subscription-dlq-mistaken': 'reads the topics and their subscriptions (Sluice.DescribeTopics)',
  'subscription-unconfirmed': 'reads the topics and their subscriptions (Sluice.DescribeTopics)',
  'subscription-filter': 'reads the topics and their counts (Sluice.DescribeTopics)',
};

const SEVERITY_RANK = { critical: 3, warning: 2, info: 1 };

/** `4d`, `1h`, `90s`, `1d12h`: the CLI's short durations. */
export function shortDuration(secs) {
  let s = Math.abs(Math.round(secs));
  const parts = [];
  for (const [unit, size] of [['d', 86400], ['h', 3600], ['m', 60]]) {
    if (s >= size) {
      parts.push(`${Math.floor(s / size)}${unit}`);
      s %= size;
    }
    if (parts.length === 2) break;
  }
  if (parts.length < 2 && (s || !parts.length)) parts.push(`${s}s`);
  return (secs < 0 ? '-' : '') + parts.slice(0, 2).join('');
}

/** A consumer timeout tag value: `30`, `30s`, `5m`, `1h` → seconds, or null. */
function parseSeconds(raw) {
  const m = /^\s*(\d+)\s*(s|m|h)?\s*$/.exec(String(raw));
  if (!m) return null;
  return Number(m[1]) * ({ s: 1, m: 60, h: 3600 }[m[2] || 's']);
}

/**
 * Findings for `queues` ([{name, arn, attrs, tags}]) and `alarms`
 * (DescribeAlarms' list, or null when unreadable): [{check, severity,
 * queue, problem, fix}], the most severe first.
 */
export function diagnose(queues, alarms) {
  const qs = queues.map((q) => {
    let redrive = null;
    try {
      if (q.attrs.RedrivePolicy) {
        const p = JSON.parse(q.attrs.RedrivePolicy);
        redrive = { arn: p.deadLetterTargetArn, max: Number(p.maxReceiveCount) };
      }
    } catch {
      redrive = null;
    }
    return {
      ...q,
      redrive,
      fifo: q.attrs.FifoQueue === 'true',
      retention: Number(q.attrs.MessageRetentionPeriod),
      visibility: Number(q.attrs.VisibilityTimeout),
    };
  });
  const byArn = new Map(qs.map((q) => [q.arn, q]));
  const isDlq = (q) => qs.some((s) => s.redrive && s.redrive.arn === q.arn);
  const out = [];
  const add = (check, severity, queue, problem, fix) => out.push({ check, severity, queue, problem, fix });
  const tail = (arn) => String(arn).slice(String(arn).lastIndexOf(':') + 1);

  for (const q of qs) {
    if (q.redrive && !byArn.has(q.redrive.arn)) {
      add('dlq-missing', 'critical', q.name,
        `its RedrivePolicy names ${q.redrive.arn}, which does not exist: a message received ${q.redrive.max} times has no dead-letter queue to go to`,
        `create the queue ${tail(q.redrive.arn)}, or point the RedrivePolicy at an existing DLQ`);
    }
  }
  for (const src of qs) {
    const dlq = src.redrive && byArn.get(src.redrive.arn);
    if (!dlq || dlq.retention > src.retention) continue;
    const left = dlq.retention - src.retention;
    const fix = src.retention >= MAX_RETENTION
      ? `${src.name} already keeps messages the longest SQS allows (14d): lower its MessageRetentionPeriod so the DLQ can keep them longer`
      : `set MessageRetentionPeriod of ${dlq.name} above the ${src.retention} s of ${src.name}; the longest, ${MAX_RETENTION} (14d), gives the most time to investigate`;
    const d = shortDuration;
    if (src.fifo) {
      add('dlq-retention', 'info', dlq.name,
        `keeps messages ${d(dlq.retention)} while its source ${src.name} keeps them ${d(src.retention)}; a FIFO DLQ restarts the retention clock on the move (R3), so a dead-lettered message still gets ${d(dlq.retention)}, but no longer than the source would have kept it`,
        fix);
      continue;
    }
    add('dlq-retention', left < 0 ? 'critical' : 'warning', dlq.name,
      `keeps messages ${d(dlq.retention)} but its source ${src.name} keeps them ${d(src.retention)}: a standard DLQ keeps the original enqueue time (R3), so a message that reaches it aged up to ${d(src.retention)} may stay only ${d(dlq.retention)} − ${d(src.retention)} = ${d(left)} before it expires`,
      fix);
  }
  for (const q of qs) {
    if (!q.redrive) continue;
    const n = q.redrive.max;
    if (n === 1) {
      add('max-receive-count', 'warning', q.name,
        'maxReceiveCount is 1: one transient failure (a timeout of the service next door) dead-letters a message that a second attempt would have processed',
        'set maxReceiveCount to 3–5 in the RedrivePolicy; fail deterministic errors at once with Sluice.NackMessage Permanent=true instead');
    } else if (n > 10) {
      add('max-receive-count', 'warning', q.name,
        `maxReceiveCount is ${n}: a broken message circulates ${n} times in the queue, costing receives and firing error alarms again and again, before it is set aside`,
        'set maxReceiveCount to 3–5 in the RedrivePolicy');
    }
  }
  for (const q of qs) {
    if (q.redrive || isDlq(q)) continue;
    add('redrive-policy', 'warning', q.name,
      `no RedrivePolicy: a poison message is retried until its retention ends (${shortDuration(q.retention)}), costing a receive every visibility timeout, and then disappears without a trace`,
      `create a DLQ (say ${q.name.replace(/\.fifo$/, '')}-dlq, retention 14d) and set RedrivePolicy {"deadLetterTargetArn":"<its ARN>","maxReceiveCount":5}`);
  }
  for (const q of qs) {
    const raw = q.tags[CONSUMER_TIMEOUT_TAG];
    if (raw === undefined) continue;
    const consumer = parseSeconds(raw);
    if (!consumer) {
      add('visibility-timeout', 'info', q.name,
        `tag ${CONSUMER_TIMEOUT_TAG}=${JSON.stringify(raw)} is not a number of seconds: not checked`,
        `set ${CONSUMER_TIMEOUT_TAG} to the consumer's timeout in seconds, e.g. 30`);
      continue;
    }
    const wanted = consumer * 6;
    if (q.visibility >= wanted) continue;
    add('visibility-timeout', q.visibility < consumer ? 'critical' : 'warning', q.name,
      `VisibilityTimeout is ${q.visibility} s but the consumer may take ${consumer} s (tag ${CONSUMER_TIMEOUT_TAG}); under 6 × ${consumer} = ${wanted} s a message can reappear while it is still being processed: a second consumer processes it too and its receive count rises without a failure`,
      `set VisibilityTimeout to at least ${wanted}`);
  }
  for (const q of qs) {
    if (!q.fifo || !q.redrive) continue;
    add('fifo-ordering', 'info', q.name,
      'a FIFO queue with a DLQ: a message moved to the DLQ unblocks its group, and the messages behind it are then processed before it, out of order',
      'keep the DLQ if unblocking the group matters more than order; if strict order is the requirement, remove the RedrivePolicy and handle poison messages in the consumer (a redrive puts the message at the back of its group)');
  }
  if (alarms) {
    for (const q of qs.filter(isDlq)) {
      const onQueue = alarms.filter((a) => a.QueueName === q.name);
      const depth = onQueue.filter((a) => a.MetricName === 'ApproximateNumberOfMessagesVisible');
      const fix = `add an alarm on ${q.name}'s ApproximateNumberOfMessagesVisible >= 1 (Sluice.PutAlarm) with an action that reaches a person`;
      if (!depth.length) {
        const problem = onQueue.length
          ? `alarms on this DLQ (${onQueue.map((a) => a.AlarmName).join(', ')}) but none on its depth (ApproximateNumberOfMessagesVisible): any message here needs a person`
          : 'a DLQ without an alarm: messages pile up and expire and nobody hears of it (a DLQ nobody watches gives a false sense of safety)';
        add('dlq-alarm', 'warning', q.name, problem, fix);
      } else if (depth.every((a) => !(a.Actions || []).length)) {
        add('dlq-alarm', 'info', q.name,
          `the depth alarm ${depth[0].AlarmName} has no actions: it changes state but tells nobody`,
          'add an action (webhook) to the alarm that reaches the on-call channel');
      }
    }
  }
  out.sort((a, b) => SEVERITY_RANK[b.severity] - SEVERITY_RANK[a.severity] || a.queue.localeCompare(b.queue));
  return out;
}
