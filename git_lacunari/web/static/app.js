// The live board page of `git lac serve`.
//
// One EventSource: the server pushes a whole snapshot after every change of
// the board (its one watcher reads it; this page never polls), and the
// board's clock beside it. Every age and every stale warning is computed here
// from absolute times and that clock, once a second, so a claim going stale
// shows without anything being pushed.
//
// Board text (titles, bodies, names, paths) is untrusted: it only ever
// reaches the page as textContent, through el() below. Never innerHTML.
// And each piece of it is isolated for bidi (iso(): a <bdi>), so a
// right-to-left override in a title cannot reorder the text beside it.
"use strict";

const STATES = ["open", "claimed", "parked", "done", "cancelled"];
const state = {
  snap: null,
  offset: 0, // board clock minus this browser's clock, in seconds
  selected: null,
  detail: null,
  detailVersion: -1,
  gone: false,
};
const csrf = document.querySelector('meta[name="lac-csrf"]').content;

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "dataset") Object.assign(node.dataset, value);
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

// Untrusted text, isolated from what surrounds it (bidi).
function iso(text) {
  return el("bdi", {}, text === null || text === undefined ? "" : String(text));
}

function boardNow() {
  return Date.now() / 1000 + state.offset;
}

function duration(seconds) {
  seconds = Math.max(0, Math.round(seconds));
  if (seconds < 60) return seconds + "s";
  if (seconds < 3600) return Math.floor(seconds / 60) + "m" + (seconds % 60 ? (seconds % 60) + "s" : "");
  if (seconds < 86400) {
    const m = Math.floor((seconds % 3600) / 60);
    return Math.floor(seconds / 3600) + "h" + (m ? m + "m" : "");
  }
  return Math.floor(seconds / 86400) + "d" + Math.floor((seconds % 86400) / 3600) + "h";
}

function absolute(at) {
  const d = new Date(at * 1000);
  const pad = (n) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ` +
    `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

// A time shown relative and absolute; kept fresh by tick().
function when(at) {
  if (at === null || at === undefined) return el("span", {}, "-");
  return el("time", { dataset: { at: String(at) }, title: absolute(at) },
    duration(boardNow() - at) + " ago");
}

// When a claim goes stale is the server's answer (rules.stale_at): the page
// has no staleness rule of its own, only its clock to compare with.
function isStale(task, now) {
  return task.stale_at !== null && task.stale_at !== undefined && now > task.stale_at;
}

function whyText(reason) {
  if (reason.kind === "waiting") return [`waiting on #${reason.task} (`, iso(reason.state), ")"];
  if (reason.kind === "capability") return ["needs capability ", iso(reason.capability), " (no agent has it)"];
  if (reason.kind === "capabilities") {
    return ["needs capabilities ", reason.capabilities.map((cap, i) => [i ? ", " : "", iso(cap)]),
      " (no one agent has them all)"];
  }
  if (reason.kind === "path") {
    const on = reason.task === null ? "" : ` on #${reason.task}`;
    return ["path ", iso(reason.path), " held by ", iso(reason.holder), " (", iso(reason.pattern), `${on})`];
  }
  return [iso(reason.kind)];
}

// --- filters --------------------------------------------------------------------

const filters = {
  lane: document.getElementById("filter-lane"),
  agent: document.getElementById("filter-agent"),
  state: document.getElementById("filter-state"),
};

function readHash() {
  const params = new URLSearchParams(location.hash.slice(1));
  for (const [name, select] of Object.entries(filters)) {
    const wanted = params.get(name) || "";
    if (wanted && ![...select.options].some((o) => o.value === wanted)) {
      select.append(el("option", { value: wanted }, wanted));
    }
    select.value = wanted;
  }
}

function writeHash() {
  const params = new URLSearchParams();
  for (const [name, select] of Object.entries(filters)) if (select.value) params.set(name, select.value);
  history.replaceState(null, "", params.toString() ? "#" + params : location.pathname);
}

function fillOptions(select, values) {
  const keep = select.value;
  const options = [el("option", { value: "" }, "all"), ...values.map((v) => el("option", { value: v }, v))];
  if (keep && !values.includes(keep)) options.push(el("option", { value: keep }, keep));
  select.replaceChildren(...options);
  select.value = keep;
}

function passes(task) {
  if (filters.lane.value && task.lane !== filters.lane.value) return false;
  if (filters.state.value && task.state !== filters.state.value) return false;
  if (filters.agent.value && task.owner !== filters.agent.value && task.created_by !== filters.agent.value) return false;
  return true;
}

for (const select of Object.values(filters)) {
  select.addEventListener("change", () => { writeHash(); render(); });
}

// --- rendering ------------------------------------------------------------------

function card(task, now) {
  const stale = isStale(task, now);
  const meta = [];
  if (task.state === "claimed") {
    meta.push(el("div", { class: "meta" }, iso(task.owner || "?"), task.where ? [" at ", iso(task.where)] : ""));
    meta.push(el("div", { class: "meta" }, "heartbeat ", when(task.heartbeat_at)));
  } else if (task.owner) {
    meta.push(el("div", { class: "meta" }, iso(task.owner)));
  }
  if (task.attempts) meta.push(el("div", { class: "meta" }, `attempts ${task.attempts}`));
  const blocked = task.blocked || [];
  return el("div", {
    class: "card" + (stale ? " stale" : "") + (state.selected === task.id ? " selected" : ""),
    dataset: { task: String(task.id), state: task.state, stale: stale ? "1" : "0" },
    onclick: () => select(task.id),
  },
  el("div", {},
    el("span", { class: "id" }, `#${task.id}`),
    el("bdi", { class: "title" }, task.title),
    task.priority ? el("span", { class: "dim" }, ` p${task.priority}`) : null,
    stale ? el("span", { class: "badge stale" }, "STALE") : null,
    blocked.length ? el("span", { class: "badge blocked" }, "blocked") : null),
  meta,
  blocked.length ? el("ul", { class: "why" }, blocked.map((r) => el("li", {}, whyText(r)))) : null);
}

function renderLanes(now) {
  const tasks = state.snap.tasks.filter(passes);
  const lanes = [...new Set(tasks.map((t) => t.lane))].sort();
  const sections = lanes.map((lane) => {
    const mine = tasks.filter((t) => t.lane === lane);
    const columns = STATES.filter((s) => !filters.state.value || s === filters.state.value).map((s) => {
      const list = mine.filter((t) => t.state === s);
      if (s === "done" || s === "cancelled") list.reverse(); // newest first
      return el("div", { class: "column", dataset: { column: s } },
        el("h3", {}, `${s} (${list.length})`), list.map((t) => card(t, now)));
    });
    return el("section", { class: "lane", dataset: { lane } },
      el("h2", {}, "lane ", iso(lane)), el("div", { class: "states" }, columns));
  });
  document.getElementById("lanes").replaceChildren(
    ...(sections.length ? sections : [el("p", { class: "dim" }, "no task matches")]));
  document.getElementById("shown").textContent =
    `${tasks.length} of ${state.snap.tasks.length} tasks shown`;
}

function renderCounts(now) {
  const counts = state.snap.counts;
  const by = counts.by_state;
  const blocked = state.snap.tasks.filter((t) => t.state === "open" && t.blocked.length).length;
  document.getElementById("count-done").textContent = counts.done_recently;
  document.getElementById("count-claimed").textContent = by.claimed || 0;
  document.getElementById("count-stuck").textContent = (by.parked || 0) + blocked;
  document.getElementById("count-stale").textContent =
    state.snap.tasks.filter((t) => isStale(t, now)).length;
  document.getElementById("count-open").textContent = by.open || 0;
}

function lockTree() {
  const root = { children: new Map(), locks: [] };
  for (const lock of state.snap.locks) {
    if (filters.agent.value && lock.agent !== filters.agent.value) continue;
    const parts = lock.pattern.replace(/\/+$/, "").split("/");
    let node = root;
    for (const part of parts) {
      if (!node.children.has(part)) node.children.set(part, { children: new Map(), locks: [] });
      node = node.children.get(part);
    }
    node.locks.push(lock);
    if (lock.pattern.endsWith("/")) node.dir = true;
  }
  function draw(node) {
    const names = [...node.children.keys()].sort();
    return el("ul", { class: node === root ? "tree" : null }, names.map((name) => {
      const child = node.children.get(name);
      return el("li", { dataset: { node: name } },
        el("span", { class: child.children.size || child.dir ? "dir" : "file" },
          iso(name), child.children.size || child.dir ? "/" : ""),
        child.locks.map((lock) => el("div", { class: "held", dataset: { lock: lock.pattern } },
          el("span", { class: "mode-" + lock.mode }, lock.mode), " ", iso(lock.pattern), " · ",
          iso(lock.agent), lock.task === null ? " (no task)" : ` #${lock.task}`, " · since ",
          when(lock.acquired_at))),
        child.children.size ? draw(child) : null);
    }));
  }
  const box = document.getElementById("locks");
  box.replaceChildren(root.children.size ? draw(root) : el("p", { class: "dim" }, "no path is locked"));
}

function eventItem(event) {
  const detail = event.detail || {};
  const extra = [];
  for (const key of ["reason", "previous_owner", "person", "via", "title"]) {
    if (detail[key]) extra.push([extra.length ? ", " : " — ", `${key}: `, iso(detail[key])]);
  }
  return el("li", { dataset: { event: String(event.id), kind: event.kind } },
    when(event.at), " ", el("bdi", { class: "kind" }, event.kind), " ",
    event.task_id !== undefined ? (event.task_id === null ? "" : `#${event.task_id} `) :
      (event.task === null ? "" : `#${event.task} `),
    "by ", iso(event.agent), extra);
}

function renderEvents() {
  const list = state.snap.events.slice().reverse()
    .filter((e) => !filters.agent.value || e.agent === filters.agent.value);
  document.getElementById("events").replaceChildren(...list.map(eventItem));
}

function render() {
  if (!state.snap) return;
  const now = boardNow();
  const s = state.snap;
  document.getElementById("where").replaceChildren(`${s.board.dialect} · `, iso(s.board.where),
    ...(s.board.team_mode ? [" · team mode, reading as ", iso(s.board.role)] : []));
  fillOptions(filters.lane, [...new Set(s.tasks.map((t) => t.lane))].sort());
  fillOptions(filters.agent, [...new Set(s.tasks.flatMap((t) => [t.owner, t.created_by])
    .concat(s.locks.map((l) => l.agent)).filter(Boolean))].sort());
  document.getElementById("who-box").hidden = !s.actions;
  renderCounts(now);
  renderLanes(now);
  lockTree();
  renderEvents();
  renderDetail();
}

// Once a second: ages, and which claims have gone stale, from the board's clock.
function tick() {
  if (!state.snap) return;
  const now = boardNow();
  document.getElementById("clock").textContent = "board time " + absolute(now);
  for (const node of document.querySelectorAll("time[data-at]")) {
    node.textContent = duration(now - Number(node.dataset.at)) + " ago";
  }
  let changed = false;
  for (const task of state.snap.tasks) {
    if (task.state !== "claimed") continue;
    const node = document.querySelector(`.card[data-task="${task.id}"]`);
    if (node && (node.dataset.stale === "1") !== isStale(task, now)) changed = true;
  }
  if (changed) render();
  else renderCounts(now);
}

// --- a task's detail and timeline, and the actions -------------------------------

function select(taskId) {
  state.selected = taskId;
  state.detail = null;
  state.detailVersion = -1;
  render();
}

async function loadDetail(taskId) {
  const version = state.snap.version;
  const response = await fetch(`/api/task/${taskId}`, { credentials: "same-origin" });
  const body = await response.json();
  if (state.selected !== taskId) return;
  state.detail = body;
  state.detailVersion = version;
  renderDetail();
}

function renderDetail() {
  const box = document.getElementById("detail");
  if (state.selected === null) { box.hidden = true; return; }
  box.hidden = false;
  const task = state.snap.tasks.find((t) => t.id === state.selected);
  // The timeline is read when a task is chosen, and again only after a change.
  if (state.detailVersion !== state.snap.version && state.detailVersion !== -2) {
    state.detailVersion = -2;
    loadDetail(state.selected);
  }
  const full = state.detail && state.detail.ok ? state.detail.task : null;
  const shown = full || task;
  document.getElementById("detail-title").replaceChildren(
    `#${shown ? shown.id : state.selected} `, shown ? iso(shown.title) : "");
  const facts = [];
  if (shown) {
    facts.push(el("div", {}, `${shown.state} · lane `, iso(shown.lane), ` · priority ${shown.priority}`,
      shown.owner ? [" · ", iso(shown.owner)] : ""));
    facts.push(el("div", { class: "dim" }, "created ", when(shown.created_at), " by ", iso(shown.created_by)));
    if (shown.needs && shown.needs.length) {
      facts.push(el("div", {}, "needs ", shown.needs.map((cap, i) => [i ? ", " : "", iso(cap)])));
    }
    for (const p of shown.paths || []) {
      const [pattern, mode] = Array.isArray(p) ? p : [p.pattern, p.mode];
      facts.push(el("div", { class: "dim" }, mode === "write" ? "writes " : "reads ", iso(pattern)));
    }
    if (full && full.body) facts.push(el("pre", {}, iso(full.body)));
  } else if (state.detail && !state.detail.ok) {
    facts.push(el("div", {}, iso(state.detail.message || state.detail.error?.message || "not found")));
  }
  document.getElementById("detail-facts").replaceChildren(...facts);
  const events = state.detail && state.detail.ok ? state.detail.events.slice().reverse() : [];
  document.getElementById("detail-events").replaceChildren(...events.map(eventItem));
  renderActions(shown);
}

function renderActions(task) {
  const box = document.getElementById("detail-actions");
  // With actions off the server refuses every action (403): no control is drawn at all.
  if (!state.snap.actions || !task) { box.hidden = true; box.replaceChildren(); return; }
  if (box.dataset.for === String(task.id) + task.state && !box.hidden) return;
  box.dataset.for = String(task.id) + task.state;
  box.hidden = false;
  const verbs = [];
  if (task.state === "claimed") verbs.push("release", "force-release");
  if (["done", "cancelled", "parked"].includes(task.state)) verbs.push("reopen");
  if (["open", "parked"].includes(task.state)) verbs.push("cancel");
  const reason = el("input", { id: "action-reason", maxlength: "1000", placeholder: "reason (for the history)" });
  const result = el("div", { id: "action-result" });
  box.replaceChildren(reason, ...verbs.map((verb) =>
    el("button", { type: "button", dataset: { action: verb }, onclick: () => act(verb, task.id, reason, result) }, verb)),
  result);
}

async function act(verb, taskId, reasonInput, result) {
  const person = document.getElementById("who").value.trim();
  localStorage.setItem("lac-who", person);
  result.className = "";
  result.textContent = "…";
  try {
    const response = await fetch(`/api/action/${verb}`, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-Lac-Csrf": csrf },
      body: JSON.stringify({ task: taskId, person, reason: reasonInput.value }),
    });
    const body = await response.json();
    if (body.ok) {
      result.textContent = `${verb}: done`;
    } else {
      result.className = "bad";
      result.replaceChildren(iso(body.message || (body.error && body.error.message) || `refused (${response.status})`));
    }
  } catch (err) {
    result.className = "bad";
    result.textContent = String(err);
  }
}

// --- the stream ------------------------------------------------------------------

// The browser reconnects by itself after a dropped stream (the server drops a
// page that stops reading, and says `retry:`); a refused one (503: too many
// pages open) it gives up on, so that one is retried here, backing off.
let backoff = 1000;

function showLive() {
  const live = document.getElementById("live");
  if (state.gone) { live.textContent = "board gone"; live.className = "live gone"; return; }
  live.textContent = "live";
  live.className = "live on";
}

function connect() {
  const live = document.getElementById("live");
  const source = new EventSource("/api/events");
  source.addEventListener("open", () => { backoff = 1000; showLive(); });
  source.addEventListener("error", () => {
    live.textContent = "reconnecting";
    live.className = "live off";
    if (source.readyState === EventSource.CLOSED) {
      source.close();
      setTimeout(connect, backoff + Math.random() * 1000);
      backoff = Math.min(backoff * 2, 30000);
    }
  });
  source.addEventListener("clock", (event) => {
    state.offset = JSON.parse(event.data).now - Date.now() / 1000;
  });
  source.addEventListener("trouble", (event) => {
    const trouble = JSON.parse(event.data);
    const box = document.getElementById("trouble");
    state.gone = Boolean(trouble.gone);
    document.body.dataset.gone = state.gone ? "1" : "0";
    box.hidden = !trouble.message;
    box.replaceChildren(...(trouble.message ?
      [state.gone ? "board gone: " : "board trouble: ", iso(trouble.message)] : []));
    showLive();
  });
  source.addEventListener("snapshot", (event) => {
    state.snap = JSON.parse(event.data);
    document.body.dataset.version = String(state.snap.version);
    render();
  });
}

document.getElementById("who").value = localStorage.getItem("lac-who") || "";
readHash();
connect();
setInterval(tick, 1000);
