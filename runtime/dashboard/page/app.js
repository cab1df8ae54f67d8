// SPDX-License-Identifier: Apache-2.0
// The dashboard page: containers (polled), the asks waiting for an operator
// (answered here), the live feed (Server-Sent Events) and one container's trail. Every text that comes from a trail, a policy or
// a container id is put in the page as text (textContent, attribute values),
// never as markup: an agent chooses its process names and file names.
'use strict';

const feedRowsKept = 1000;
const svgNs = 'http://www.w3.org/2000/svg';

const state = {
  containers: new Map(), // id -> the last /api/containers entry
  ops: new Set(),
  selected: null,        // container whose trail is shown
  detailRecords: [],
  ruleLists: [],         // /api/rule-lists: each list a policy may hold, with its short label
  askIds: '',            // the pending asks shown: rows are made again only when they change
  answerKey: null,       // /api/session: what an answer carries (X-Cerberus-Answer), never a cookie
};

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

function svg(tag, attributes) {
  const node = document.createElementNS(svgNs, tag);
  for (const [name, value] of Object.entries(attributes || {})) node.setAttribute(name, String(value));
  return node;
}

// 2024-05-01T12:03:04.123456789Z -> 12:03:04.123 (and the date when it is not today)
function clock(time) {
  if (typeof time !== 'string' || time.length < 23) return String(time || '');
  const today = new Date().toISOString().slice(0, 10);
  const day = time.slice(0, 10);
  return (day === today ? '' : day + ' ') + time.slice(11, 23);
}

function processText(r) {
  const name = (r.comm || '?') + '[' + (r.pid ?? '?') + ']';
  return r.exe ? name + ' ' + r.exe : name;
}

function policySummary(policy) {
  if (!policy || typeof policy !== 'object' || Object.keys(policy).length === 0) return '';
  const parts = [policy.mode || 'enforce'];
  const list = (name, label) => {
    const value = policy[name]; // a list; commands: an object by tool name; ask_hosts: {names, ask_timeout}
    const items = Array.isArray(value) ? value : value && Array.isArray(value.names) ? value.names
      : value && typeof value === 'object' ? Object.keys(value) : null;
    if (!items) return;
    const shown = items.slice(0, 3).join(' ');
    parts.push(label + ': ' + (items.length ? shown : 'none') + (items.length > 3 ? ' +' + (items.length - 3) : ''));
  };
  for (const ruleList of state.ruleLists) list(ruleList.name, ruleList.label);
  return parts.join(' · ');
}

// One row of the feed or of a trail; records of other types get a row of their own kind.
function recordRow(r, withContainer) {
  const tr = el('tr', 'record');
  tr.dataset.type = r.type || '';
  tr.dataset.container = r.id || '';
  tr.dataset.op = r.op || (r.type === 'command' ? 'command' : '');
  const cells = [];
  cells.push(el('td', 'time', clock(r.time)));
  if (withContainer) cells.push(el('td', 'container', r.id));
  else cells.push(el('td', 'kind', r.type === 'denial' ? r.verdict : r.type));
  if (r.type === 'denial') {
    tr.classList.add(r.verdict === 'audit' ? 'audit' : 'denied');
    cells.push(el('td', 'process', processText(r)));
    cells.push(el('td', 'op', r.op));
    cells.push(el('td', 'target', r.target));
    cells.push(el('td', 'rule', r.rule));
    cells.push(el('td', 'errno', r.error ? r.error + ' (' + r.errno + ')' : r.errno));
  } else if (r.type === 'dns') {
    // The DNS gate's: a name refused (or let through in audit mode), or an answer's address kept out.
    tr.classList.add(r.verdict === 'audit' ? 'audit' : 'denied');
    cells.push(el('td', 'process', ''));
    cells.push(el('td', 'op', 'dns ' + r.qtype));
    cells.push(el('td', 'target', r.name + (r.address ? ' -> ' + r.address : '')));
    cells.push(el('td', 'rule', r.rule));
    cells.push(el('td', 'errno', r.verdict));
  } else if (r.type === 'http') {
    // The egress proxy's: a request decided by allowed_http, or a TLS handshake refused by its server name.
    if (r.verdict !== 'allowed') tr.classList.add(r.verdict === 'audit' ? 'audit' : 'denied');
    cells.push(el('td', 'process', ''));
    cells.push(el('td', 'op', r.kind === 'tls' ? 'tls' : 'http ' + r.method));
    cells.push(el('td', 'target', r.kind === 'tls' ? r.server_name + ' -> ' + r.address : r.url));
    cells.push(el('td', 'rule', r.rule + (r.reason ? ': ' + r.reason : '')));
    cells.push(el('td', 'errno', r.verdict + (r.status ? ', ' + r.status : '')));
  } else if (r.type === 'command') {
    // The command broker's: a call of a brokered tool, with what decided it and how the tool ended.
    if (r.verdict !== 'allowed') tr.classList.add(r.verdict === 'audit' ? 'audit' : 'denied');
    const ended = r.status !== undefined ? ', exit ' + r.status : r.signal !== undefined ? ', signal ' + r.signal : '';
    cells.push(el('td', 'process', ''));
    cells.push(el('td', 'op', 'command'));
    cells.push(el('td', 'target', [r.tool, ...(Array.isArray(r.args) ? r.args : [])].join(' ')));
    cells.push(el('td', 'rule', r.rule + (r.backend && r.backend !== 'static' ? ' [' + r.backend + ']' : '')));
    cells.push(el('td', 'errno', r.verdict + ended));
  } else if (r.type === 'lost') {
    tr.classList.add('lost');
    const td = el('td', 'note', r.count + ' events lost (' + r.total + ' in all)');
    td.colSpan = 5;
    cells.push(td);
  } else if (r.type === 'start') {
    tr.classList.add('start');
    // What the backend cannot report never reaches the trail: say so where the operator looks.
    const unreported = Array.isArray(r.not_reported) && r.not_reported.length > 0
      ? '; not reported by this backend: ' + r.not_reported.join('; ') : '';
    const td = el('td', 'note', 'started, enforced by ' + r.enforcement + ': ' + policySummary(r.policy) + unreported);
    td.colSpan = 5;
    cells.push(td);
  } else {
    return null;
  }
  for (const cell of cells) tr.appendChild(cell);
  return tr;
}

// Bars of counts over time: buckets of [time in ms, count].
function drawBars(node, buckets, width, height) {
  node.replaceChildren();
  node.setAttribute('width', width);
  node.setAttribute('height', height);
  if (buckets.length === 0) return;
  const max = Math.max(1, ...buckets.map((b) => b[1]));
  const barWidth = width / buckets.length;
  buckets.forEach(([at, count], i) => {
    const h = Math.round((count / max) * (height - 2));
    const bar = svg('rect', { x: i * barWidth, y: height - h, width: Math.max(1, barWidth - 1), height: h });
    const title = svg('title');
    title.textContent = new Date(at).toISOString().slice(11, 19) + ' UTC: ' + count;
    bar.appendChild(title);
    node.appendChild(bar);
  });
}

// The last hour, minute by minute, from the server's per_minute counts.
function sparkline(perMinute) {
  const node = svg('svg', { class: 'spark' });
  const now = Math.floor(Date.now() / 60000);
  const counts = new Map(perMinute.map(([minute, count]) => [minute, count]));
  const buckets = [];
  for (let m = now - 59; m <= now; m++) buckets.push([m * 60000, counts.get(m) || 0]);
  drawBars(node, buckets, 120, 24);
  return node;
}

function renderContainers(list) {
  const tbody = document.querySelector('#containers tbody');
  tbody.replaceChildren();
  document.getElementById('no-containers').hidden = list.length > 0;
  const select = document.getElementById('filter-container');
  for (const c of list) {
    state.containers.set(c.id, c);
    const tr = el('tr', 'container-row');
    tr.dataset.container = c.id;
    if (c.id === state.selected) tr.classList.add('selected');
    tr.appendChild(el('td', 'id', c.id));
    tr.appendChild(el('td', 'status status-' + c.status, c.status));
    tr.appendChild(el('td', 'backend', c.enforcement));
    // What the DNS gate admitted for the policy's names: the count, and each address on hover.
    const admitted = Array.isArray(c.dns) ? c.dns : [];
    const policy = el('td', 'policy', policySummary(c.policy) +
      (admitted.length > 0 ? '; ' + admitted.length + ' admitted by DNS' : ''));
    policy.title = JSON.stringify(c.policy) + admitted.map((a) =>
      '\n' + a.name + ' -> ' + a.address + ':' + a.ports + ' until ' + a.expires).join('');
    // Calls and lookups held for an operator: answered in the asks table (renderAsks) or with `cerberus ask`.
    const asks = Array.isArray(c.asks) ? c.asks : [];
    if (asks.length > 0) policy.textContent += '; ' + asks.length + ' asked';
    tr.appendChild(policy);
    tr.appendChild(el('td', 'denials num', c.denials));
    tr.appendChild(el('td', 'audits num', c.audits));
    tr.appendChild(el('td', 'lost num' + (c.lost > 0 ? ' warn' : ''), c.lost));
    const last = c.last && c.last.op ? clock(c.last.time) + ' ' + c.last.op + ' ' + (c.last.target || '') : '';
    tr.appendChild(el('td', 'last', last));
    const chart = el('td', 'chart-cell');
    chart.appendChild(sparkline(c.per_minute || []));
    tr.appendChild(chart);
    tr.addEventListener('click', () => selectContainer(c.id));
    tbody.appendChild(tr);
    if (![...select.options].some((o) => o.value === c.id)) select.appendChild(new Option(c.id, c.id));
  }
}

// What an ask holds: "host api.example.com", or the call with its working directory and process.
function askSubject(a) {
  if (a.host) return 'host ' + a.host;
  return a.tool + ' ' + (a.args || []).join(' ');
}

function askContext(a) {
  return a.host ? a.rule : a.rule + '; in ' + a.cwd + ', pid ' + a.pid;
}

async function answerAsk(id, answer) {
  const result = document.getElementById('ask-result');
  try {
    const response = await fetch('/api/asks/' + encodeURIComponent(id) + '/answer', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Cerberus-Answer': state.answerKey },
      body: JSON.stringify({ answer }),
    });
    const reply = await response.json();
    result.textContent = response.ok ? reply.done : 'not answered: ' + reply.error;
    result.classList.toggle('warn', !response.ok);
  } catch (e) {
    result.textContent = 'not answered: ' + e;
    result.classList.add('warn');
  }
  refreshContainers();
}

function answerButton(label, className, id, answer) {
  const button = el('button', 'answer ' + className, label);
  button.type = 'button';
  button.addEventListener('click', () => answerAsk(id, typeof answer === 'function' ? answer() : answer));
  return button;
}

// The entries of one field of every container, each with its container's id.
function perContainer(list, field) {
  return list.flatMap((c) => (Array.isArray(c[field]) ? c[field] : []).map((x) => ({ ...x, container: c.id })));
}

// The body of table #name, emptied, its section #name-section shown or hidden.
function emptiedTable(name, shown) {
  document.getElementById(name + '-section').hidden = !shown;
  const tbody = document.querySelector('#' + name + ' tbody');
  tbody.replaceChildren();
  return tbody;
}

function renderAsks(list) {
  const asks = perContainer(list, 'asks');
  const ids = asks.map((a) => a.id).join(' ');
  if (ids === state.askIds) return; // the minutes typed in a row stay as they are
  state.askIds = ids;
  const tbody = emptiedTable('asks', asks.length > 0);
  for (const a of asks) {
    const tr = el('tr', 'ask-row');
    tr.dataset.ask = a.id;
    tr.appendChild(el('td', 'id', a.id));
    tr.appendChild(el('td', 'container', a.container));
    tr.appendChild(el('td', 'subject', askSubject(a)));
    tr.appendChild(el('td', 'context', askContext(a)));
    tr.appendChild(el('td', 'deadline', clock(a.deadline)));
    const buttons = el('td', 'answers');
    const minutes = el('input', 'minutes');
    minutes.type = 'number';
    minutes.min = '1';
    minutes.value = '10';
    minutes.title = 'minutes';
    buttons.appendChild(answerButton('once', 'once', a.id, 'once'));
    buttons.appendChild(minutes);
    buttons.appendChild(answerButton('for minutes', 'lasting', a.id,
      () => 'for ' + Math.max(1, parseInt(minutes.value, 10) || 10) + 'm'));
    buttons.appendChild(answerButton('always', 'always', a.id, 'always'));
    buttons.appendChild(answerButton('deny', 'deny', a.id, 'deny'));
    tr.appendChild(buttons);
    tbody.appendChild(tr);
  }
}

// What operators granted (an answer for a while or always): until it expires, is revoked or its container goes.
function renderGrants(list) {
  const grants = perContainer(list, 'grants');
  const tbody = emptiedTable('grants', grants.length > 0);
  for (const g of grants) {
    const tr = el('tr', 'grant-row');
    tr.dataset.grant = g.id;
    tr.appendChild(el('td', 'id', g.id));
    tr.appendChild(el('td', 'container', g.container));
    tr.appendChild(el('td', 'subject', askSubject(g)));
    tr.appendChild(el('td', 'expires', g.expires === 'never' ? 'always' : clock(g.expires)));
    tbody.appendChild(tr);
  }
}

async function refreshContainers() {
  try {
    const response = await fetch('/api/containers', { cache: 'no-store' });
    if (!response.ok) return;
    const list = await response.json();
    renderContainers(list);
    renderAsks(list);
    renderGrants(list);
  } catch (e) {
    /* the connection indicator says so */
  }
}

function feedFilterMatches(tr) {
  const container = document.getElementById('filter-container').value;
  const op = document.getElementById('filter-op').value;
  return (!container || tr.dataset.container === container) && (!op || tr.dataset.op === op);
}

function applyFeedFilter() {
  for (const tr of document.querySelectorAll('#feed tbody tr')) tr.hidden = !feedFilterMatches(tr);
}

function addOp(op) {
  if (!op || state.ops.has(op)) return;
  state.ops.add(op);
  document.getElementById('filter-op').appendChild(new Option(op, op));
}

// Newest first; only denials (and audit verdicts) in the feed: the kernel's, and the command broker's.
function addToFeed(r) {
  const brokered = r.type === 'command' && (r.verdict === 'denied' || r.verdict === 'audit');
  if (r.type !== 'denial' && !brokered) return;
  addOp(brokered ? 'command' : r.op);
  const tr = recordRow(r, true);
  tr.hidden = !feedFilterMatches(tr);
  const tbody = document.querySelector('#feed tbody');
  tbody.insertBefore(tr, tbody.firstChild);
  while (tbody.children.length > feedRowsKept) tbody.removeChild(tbody.lastChild);
}

function onRecord(r) {
  addToFeed(r);
  if (state.selected && r.id === state.selected) {
    state.detailRecords.push(r);
    renderDetail();
  }
  if (r.type === 'start' || !state.containers.has(r.id)) refreshContainers();
}

function renderDetail() {
  const query = document.getElementById('detail-search').value.trim().toLowerCase();
  const tbody = document.querySelector('#detail-trail tbody');
  tbody.replaceChildren();
  let shown = 0;
  for (let i = state.detailRecords.length - 1; i >= 0; i--) {
    const r = state.detailRecords[i];
    if (query) {
      const text = [r.time, r.type, r.comm, r.exe, r.op, r.target, r.rule, r.verdict, r.error, r.pid]
        .join(' ').toLowerCase();
      if (!text.includes(query)) continue;
    }
    const tr = recordRow(r, false);
    if (tr) {
      tbody.appendChild(tr);
      shown++;
    }
  }
  document.getElementById('detail-count').textContent =
    shown + ' of ' + state.detailRecords.length + ' records shown';
  drawDetailChart();
}

// Denials over the span of the trail, in 60 bars.
function drawDetailChart() {
  const times = state.detailRecords.filter((r) => r.type === 'denial').map((r) => Date.parse(r.time)).filter((t) => !isNaN(t));
  const node = document.getElementById('detail-chart');
  if (times.length === 0) {
    drawBars(node, [], 720, 90);
    return;
  }
  const first = Math.min(...times);
  const last = Math.max(...times, first + 60000);
  const bars = 60;
  const step = (last - first) / bars;
  const buckets = Array.from({ length: bars }, (_, i) => [first + i * step, 0]);
  for (const t of times) buckets[Math.min(bars - 1, Math.floor((t - first) / step))][1]++;
  drawBars(node, buckets, 720, 90);
}

async function selectContainer(id) {
  state.selected = id;
  state.detailRecords = [];
  document.getElementById('detail-section').hidden = false;
  document.getElementById('detail-id').textContent = id;
  for (const tr of document.querySelectorAll('#containers tbody tr'))
    tr.classList.toggle('selected', tr.dataset.container === id);
  const response = await fetch('/api/trail?id=' + encodeURIComponent(id), { cache: 'no-store' });
  if (!response.ok) return;
  const trail = await response.json();
  if (state.selected !== id) return;
  state.detailRecords = trail.records;
  renderDetail();
}

function setConnection(text, ok) {
  const node = document.getElementById('connection');
  node.textContent = text;
  node.classList.toggle('ok', ok);
}

async function start() {
  document.getElementById('filter-container').addEventListener('change', applyFeedFilter);
  document.getElementById('filter-op').addEventListener('change', applyFeedFilter);
  document.getElementById('detail-search').addEventListener('input', renderDetail);
  state.ruleLists = await (await fetch('/api/rule-lists', { cache: 'no-store' })).json();
  state.answerKey = (await (await fetch('/api/session', { cache: 'no-store' })).json()).answer_key;
  await refreshContainers();
  setInterval(refreshContainers, 2000);
  const feed = await (await fetch('/api/feed', { cache: 'no-store' })).json();
  for (const r of feed.records) addToFeed(r);
  const events = new EventSource('/api/events?after=' + feed.seq);
  events.onopen = () => setConnection('live', true);
  events.onerror = () => setConnection('reconnecting…', false);
  // The server skipped records this page was too slow to take: the trails keep them.
  let skipped = 0;
  events.addEventListener('skipped', (message) => {
    skipped += JSON.parse(message.data).skipped;
    const note = document.getElementById('feed-skipped');
    note.textContent = `${skipped} records were not shown here as they came (the feed fell behind); ` +
      'the counts and each container\'s trail have them all.';
    note.hidden = false;
  });
  events.onmessage = (message) => {
    let record;
    try {
      record = JSON.parse(message.data);
    } catch (e) {
      return;
    }
    onRecord(record);
  };
}

document.addEventListener('DOMContentLoaded', start);
