// The console's shell: the hash router, the sign-in form (with
// authentication on), and the lifetime of each page (its timers stop when
// the operator leaves it).

import { ApiError, credentials, signIn, signOut, sqs } from './api.js';
import { el, replace, statusLine } from './ui.js';
import * as queuesPage from './pages/queues.js';
import * as queuePage from './pages/queue.js';
import * as messagesPage from './pages/messages.js';
import * as redrivePage from './pages/redrive.js';
import * as archivePage from './pages/archive.js';
import * as tasksPage from './pages/tasks.js';
import * as alarmsPage from './pages/alarms.js';
import * as doctorPage from './pages/doctor.js';
import * as topicsPage from './pages/topics.js';

const main = document.getElementById('main');
const who = document.getElementById('who');

/** `#/queues/NAME/sub?k=v` → {page, name, query}. */
function parseRoute(hash) {
  const [path, search = ''] = hash.replace(/^#/, '').split('?');
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  const query = new URLSearchParams(search);
  if (parts[0] === 'alarms') return { page: alarmsPage, title: 'Alarms', query };
  if (parts[0] === 'doctor') return { page: doctorPage, title: 'Doctor', query };
  if (parts[0] === 'topics') return { page: topicsPage, title: 'Topics', query };
  if (parts[0] !== 'queues' || parts.length === 1) return { page: queuesPage, title: 'Queues', query };
  const name = parts[1];
  const sub = parts[2] || '';
  const pages = { '': queuePage, messages: messagesPage, redrive: redrivePage, tasks: tasksPage, archive: archivePage };
  const page = pages[sub];
  if (!page) return { page: null, name, query };
  const titles = { '': name, messages: `${name}: messages`, redrive: `${name}: redrive`, tasks: `${name}: move tasks`, archive: `${name}: archive` };
  return { page, name, query, title: titles[sub] };
}

/** What the current page registered to stop when it is left. */
let current = null;

/** A page's context: timers that end with the page, and error reporting. */
function pageContext() {
  const timers = new Set();
  const ctx = {
    live: true,
    /** Runs `fn` every `ms` after the previous run ended, while the page is shown. */
    every(ms, fn) {
      const tick = async () => {
        if (!ctx.live) return;
        try {
          await fn();
        } catch (err) {
          if (!ctx.live || !ctx.fail(err)) return;
        }
        if (ctx.live) timers.add(setTimeout(tick, ms));
      };
      timers.add(setTimeout(tick, ms));
    },
    /** Reports an error; false when it ended the page (sign-in needed). */
    fail(err) {
      if (err instanceof ApiError && err.needsSignIn) {
        showSignIn(err);
        return false;
      }
      return true;
    },
    stop() {
      ctx.live = false;
      for (const t of timers) clearTimeout(t);
    },
  };
  return ctx;
}

async function route() {
  if (current) current.stop();
  const ctx = pageContext();
  current = ctx;
  const { page, name, query, title } = parseRoute(location.hash || '#/queues');
  document.title = title ? `${title} · sluice console` : 'sluice console';
  markNav();
  if (!page) {
    replace(main, el('h1', {}, 'Not found'), el('p', {}, 'No such page. ', el('a', { href: '#/queues' }, 'Back to the queues')));
    return;
  }
  replace(main);
  try {
    await page.render(main, { name, query }, ctx);
  } catch (err) {
    if (!ctx.live || !ctx.fail(err)) return;
    const status = statusLine();
    status.error(err);
    replace(main, el('h1', {}, title || 'Error'), status.node, el('p', {}, el('a', { href: '#/queues' }, 'Back to the queues')));
  }
}

function markNav() {
  for (const link of document.querySelectorAll('header nav a')) {
    const here = (location.hash || '#/queues').startsWith(link.getAttribute('href'));
    if (here) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
}

function showWho() {
  const creds = credentials();
  if (!creds) {
    replace(who);
    return;
  }
  replace(
    who,
    'Signed in as ',
    el('code', {}, creds.accessKeyId),
    ' ',
    el('button', {
      type: 'button',
      class: 'link',
      onclick: () => {
        signOut();
        showWho();
        showSignIn(null);
      },
    }, 'Sign out'),
  );
}

/** The sign-in form: the server asked for SigV4 credentials. */
function showSignIn(err) {
  if (current) current.stop();
  current = null;
  showWho();
  document.title = 'Sign in · sluice console';
  const status = statusLine();
  if (err && err.code !== 'MissingAuthenticationToken') {
    status.error(err);
  }
  const field = (id, label, attrs = {}) =>
    el('div', { class: 'field' }, el('label', { for: id }, label), el('input', { id, name: id, ...attrs }));
  const form = el(
    'form',
    { class: 'signin', id: 'signin' },
    el('h1', {}, 'Sign in'),
    el('p', {}, 'This server requires signed requests. Use an access key from its configuration; it is kept in this tab only (sessionStorage) and every request is signed in the browser.'),
    field('access-key-id', 'Access key ID', { required: true, autocomplete: 'username', spellcheck: 'false' }),
    field('secret-access-key', 'Secret access key', { type: 'password', required: true, autocomplete: 'current-password' }),
    field('session-token', 'Session token (if the key has one)', { autocomplete: 'off', spellcheck: 'false' }),
    field('region', 'Region', { value: 'us-east-1', required: true, spellcheck: 'false' }),
    el('button', { type: 'submit' }, 'Sign in'),
    status.node,
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const value = (id) => form.querySelector(`#${id}`).value.trim();
    signIn({
      accessKeyId: value('access-key-id'),
      secretAccessKey: form.querySelector('#secret-access-key').value,
      sessionToken: value('session-token'),
      region: value('region') || 'us-east-1',
    });
    try {
      await sqs('ListQueues', { MaxResults: 1 });
    } catch (e) {
      signOut();
      status.error(e);
      return;
    }
    showWho();
    route();
  });
  replace(main, form);
  form.querySelector('#access-key-id').focus();
}

async function start() {
  showWho();
  window.addEventListener('hashchange', () => {
    route();
    main.focus({ preventScroll: true });
  });
  try {
    // With authentication off this succeeds unsigned; with it on, the
    // refusal says so and the sign-in form is shown.
    await sqs('ListQueues', { MaxResults: 1 });
  } catch (err) {
    if (err instanceof ApiError && err.needsSignIn) {
      if (credentials()) signOut();
      showSignIn(err);
      return;
    }
  }
  route();
}

start();
