// Small DOM helpers shared by the pages: elements built from data (never
// HTML strings), formats, and the typed-name confirmation.

/**
 * `el('a', {href: '#/'}, 'text', child)`: an element with attributes
 * (`class`, `for`, `on<event>` handlers, booleans, `dataset`) and children
 * (strings become text nodes; null/false are skipped).
 */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') {
      node.addEventListener(name.slice(2), value);
    } else if (name === 'dataset') {
      Object.assign(node.dataset, value);
    } else if (value === true) {
      node.setAttribute(name, '');
    } else {
      node.setAttribute(name, String(value));
    }
  }
  append(node, children);
  return node;
}

function append(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replaces the children of `node`. */
export function replace(node, ...children) {
  node.replaceChildren();
  append(node, children);
}

/** Sets a text node's content only when it changed (no flicker, no reflow). */
export function setText(node, text) {
  const value = String(text);
  if (node.textContent !== value) node.textContent = value;
}

/** The queue name at the end of a queue URL or ARN. */
export function queueName(urlOrArn) {
  const s = String(urlOrArn || '');
  return s.slice(Math.max(s.lastIndexOf('/'), s.lastIndexOf(':')) + 1);
}

/** The console link of a queue's page (`rest`: a sub-page). */
export function queueHref(name, rest = '') {
  return `#/queues/${encodeURIComponent(name)}${rest ? `/${rest}` : ''}`;
}

/** A count with thousands separators. */
export function count(n) {
  return n === undefined || n === null || Number.isNaN(Number(n)) ? '—' : Number(n).toLocaleString('en');
}

/** A duration in seconds, shortly: `42 s`, `3 min`, `5 h`, `2 d`. */
export function duration(seconds) {
  if (seconds === undefined || seconds === null || Number.isNaN(seconds)) return '—';
  const s = Math.floor(seconds);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 86400) return `${Math.floor(s / 3600)} h`;
  return `${Math.floor(s / 86400)} d`;
}

/** A time in ms since the epoch, as local `YYYY-MM-DD HH:MM:SS`. */
export function time(ms) {
  const n = Number(ms);
  if (!n) return '—';
  const d = new Date(n);
  const two = (v) => String(v).padStart(2, '0');
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
}

/** `text` pretty-printed if it is JSON, as is otherwise. */
export function prettyJson(text) {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/** A status line (polite live region) to report results and errors in. */
export function statusLine() {
  const node = el('p', { class: 'status', role: 'status', 'aria-live': 'polite' });
  return {
    node,
    ok(text) {
      node.className = 'status ok';
      node.textContent = text;
    },
    error(err) {
      node.className = 'status error';
      node.textContent = err && err.code ? `${err.code}: ${err.message}` : String(err && err.message ? err.message : err);
    },
    info(text) {
      node.className = 'status';
      node.textContent = text;
    },
  };
}

/**
 * A dangerous action behind a typed confirmation: the button stays
 * disabled until `name` is typed exactly.
 */
export function typedConfirmation({ id, name, label, explain, action }) {
  const status = statusLine();
  const input = el('input', {
    id: `${id}-confirm`,
    type: 'text',
    autocomplete: 'off',
    spellcheck: 'false',
    'aria-describedby': `${id}-explain`,
  });
  const button = el('button', { type: 'submit', class: 'danger', id: `${id}-button`, disabled: true }, label);
  input.addEventListener('input', () => {
    button.disabled = input.value !== name;
  });
  const form = el(
    'form',
    { class: 'confirm', id },
    el('p', { id: `${id}-explain` }, explain),
    el('label', { for: input.id }, 'Type ', el('code', {}, name), ' to confirm'),
    el('div', { class: 'row' }, input, button),
    status.node,
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (input.value !== name) return;
    button.disabled = true;
    try {
      status.ok(await action());
      input.value = '';
    } catch (err) {
      status.error(err);
      button.disabled = input.value !== name;
    }
  });
  return form;
}
