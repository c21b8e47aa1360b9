// The approvals page: the signed-in owner's waiting pauses, answered through the router's
// JSON routes (GET pauses, POST answers). A pause is named by its reference, in the body: never
// its id, never in a URL. Everything shown is set as text, never as HTML.
"use strict";

(() => {
  const list = document.getElementById("pauses");
  const status = document.getElementById("status");
  const empty = document.getElementById("empty");
  const pollMs = Number(document.body.dataset.pollMs) || 2000;
  const cards = new Map(); // key → the card's <li>

  function el(tag, attributes, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes || {})) {
      if (name === "text") node.textContent = value;
      else if (value !== undefined && value !== null && value !== false) node.setAttribute(name, value);
    }
    for (const child of children) if (child) node.append(child);
    return node;
  }

  // Every pause, a channel's too, is keyed by its reference.
  function keyOf(entry) {
    return `pause:${entry.pause_ref}`;
  }

  // A channel pause is answered through its channel: the page shows it, without buttons.
  function answeredHere(entry) {
    return entry.answered_by === "thread-owner";
  }

  function waited(seconds) {
    const minutes = Math.floor(seconds / 60);
    if (minutes < 1) return `${Math.floor(seconds)} s`;
    if (minutes < 60) return `${minutes} min`;
    const hours = Math.floor(minutes / 60);
    if (hours < 24) return `${hours} h ${minutes % 60} min`;
    return `${Math.floor(hours / 24)} d ${hours % 24} h`;
  }

  function left(seconds) {
    return seconds > 0 ? `expires in ${waited(seconds)}` : "expired: no longer answerable";
  }

  // A ladder's next step, as a card says it: "reminder in 40 min".
  const STEPS = { remind: "reminder", escalate: "escalation" };
  function nextStep(entry) {
    if (entry.next_step === null || entry.next_step === undefined) return "";
    const step = STEPS[entry.next_step] || entry.next_step;
    const seconds = entry.next_step_in_seconds;
    return seconds > 0 ? `${step} in ${waited(seconds)}` : `${step} due`;
  }

  // A question several approve, as a card says it: "1 of 2 approvals (fin-1)".
  function tally(entry) {
    const votes = entry.votes;
    if (!votes) return "";
    const approving = votes.votes.filter((vote) => vote.approved).map((vote) => vote.voter);
    const rejecting = votes.votes.filter((vote) => !vote.approved).map((vote) => vote.voter);
    let said = `${approving.length} of ${votes.needed} approvals`;
    if (approving.length) said += ` (${approving.join(", ")})`;
    if (rejecting.length) said += `, rejected by ${rejecting.join(", ")}`;
    return said;
  }

  // Who handles a question a person claimed (app.claim), while the claim holds.
  function claim(entry) {
    if (!entry.claimed_by) return "";
    const until = new Date(entry.claimed_until).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
    return `handled by ${entry.claimed_by} until ${until}`;
  }

  function shown(value) {
    return typeof value === "string" ? value : JSON.stringify(value);
  }

  // What was decided, in words: the verdict, the arguments it changed (as the receipt shows
  // them: masked like the page), the reason.
  function decided(entry, decision) {
    if (!decision) return "Answered";
    const reason = decision.reason ? ` (${decision.reason})` : "";
    if (!decision.approved) return `Rejected${reason}`;
    const asked = entry.ask.arguments || {};
    const changed = Object.entries(decision.override_arguments || {}).filter(
      ([key, value]) => JSON.stringify(value) !== JSON.stringify(asked[key]),
    );
    const other = changed.length
      ? ` with ${changed.map(([key, value]) => `${key}=${shown(value)}`).join(", ")}`
      : "";
    return `Approved${other}${reason}`;
  }

  function note(card, text, kind, errors) {
    const box = card.querySelector(".note");
    box.textContent = text;
    box.className = `note ${kind}`;
    const old = card.querySelector("ul.errors");
    if (old) old.remove();
    if (errors && errors.length) {
      box.after(el("ul", { class: "errors" }, ...errors.map((line) => el("li", { text: line }))));
    }
  }

  // An answered or withdrawn card stays for two reads of the inbox (4 s by default), and two
  // seconds at the least however fast the page polls, saying so, before it leaves the list:
  // long enough to be read.
  const KEEP_MS = Math.max(2 * pollMs, 2000);

  function settle(card, state) {
    card.dataset.state = state;
    card.dataset.settledAt = String(Date.now());
    for (const control of card.querySelectorAll("button, input, textarea, select")) {
      control.disabled = true;
    }
  }

  function bound(entry, body) {
    if (!body.decision || !entry.ask.digest) return body;
    return { ...body, decision: { ...body.decision, digest: entry.ask.digest } };
  }

  async function answer(card, entry, body) {
    for (const button of card.querySelectorAll("button")) button.disabled = true;
    note(card, "Sending…", "");
    let response;
    try {
      response = await fetch("answers", {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "application/json" },
        credentials: "same-origin",
        // A decision names the question it saw: one that asks otherwise now is refused.
        body: JSON.stringify({ pause_ref: entry.pause_ref, ...bound(entry, body) }),
      });
    } catch (error) {
      note(card, "The server cannot be reached; nothing was recorded. Try again.", "error");
      for (const button of card.querySelectorAll("button")) button.disabled = false;
      return;
    }
    const reply = await response.json().catch(() => ({}));
    if (response.ok && reply.decided === false) {
      // A vote: the question waits for the other voters, this one has voted.
      const votes = card.querySelector(".votes");
      if (votes) votes.textContent = tally(reply);
      note(card, `Your vote is recorded (${decided(entry, reply.decision)}); it waits for the other voters.`, "ok");
      settle(card, "voted");
      return;
    }
    if (response.ok) {
      note(card, `${decided(entry, reply.decision)} — recorded.`, "ok");
      settle(card, "done");
      return;
    }
    if (response.status === 409 || response.status === 404) {
      note(
        card,
        "This pause no longer waits: it was answered elsewhere or withdrawn. Nothing was changed.",
        "warn",
      );
      settle(card, "gone");
      return;
    }
    const hint = reply.hint ? ` ${reply.hint}.` : "";
    note(card, `${reply.detail || "The answer was refused."}${hint}`, "error", reply.errors);
    for (const button of card.querySelectorAll("button")) button.disabled = false;
  }

  // An input for each field of the tool's input schema; anything nested is edited as JSON.
  function field(name, schema, value, required) {
    const resolved = schema.anyOf ? schema.anyOf.find((s) => s.type !== "null") || {} : schema;
    let input;
    if (Array.isArray(resolved.enum)) {
      input = el("select", { name });
      for (const option of resolved.enum) {
        input.append(el("option", { value: JSON.stringify(option), text: shown(option), selected: option === value }));
      }
      input.dataset.kind = "enum";
    } else if (resolved.type === "boolean") {
      input = el("input", { type: "checkbox", name, checked: value === true });
      input.dataset.kind = "boolean";
    } else if (resolved.type === "number" || resolved.type === "integer") {
      input = el("input", { type: "number", name, step: resolved.type === "integer" ? "1" : "any" });
      input.value = value === undefined || value === null ? "" : String(value);
      input.dataset.kind = resolved.type;
    } else if (resolved.type === "string") {
      input = el("input", { type: "text", name });
      input.value = value === undefined || value === null ? "" : value;
      input.dataset.kind = "string";
    } else {
      input = el("textarea", { name });
      input.value = value === undefined ? "" : JSON.stringify(value, null, 2);
      input.dataset.kind = "json";
    }
    if (required) input.setAttribute("aria-required", "true"); // checked by the server, as any override
    if (schema.anyOf && schema.anyOf.some((s) => s.type === "null")) input.dataset.nullable = "true";
    const label = schema.title || resolved.title || name;
    return el("label", {}, el("span", { text: label }), input);
  }

  function readForm(form) {
    const values = {};
    for (const input of form.querySelectorAll("[name]")) {
      const kind = input.dataset.kind;
      if (kind === "boolean") values[input.name] = input.checked;
      else if (kind === "number" || kind === "integer") {
        values[input.name] = input.value === "" ? null : Number(input.value);
      } else if (kind === "enum") values[input.name] = JSON.parse(input.value);
      else if (kind === "json") {
        try {
          values[input.name] = input.value.trim() === "" ? null : JSON.parse(input.value);
        } catch (error) {
          throw new Error(`${input.name}: not JSON`);
        }
      } else values[input.name] = input.value === "" && input.dataset.nullable ? null : input.value;
    }
    return values;
  }

  function editForm(card, entry) {
    const schema = entry.arguments_schema || {};
    const properties = schema.properties || {};
    const required = new Set(schema.required || []);
    const form = el("form", { class: "edit", hidden: true, "aria-label": "Edit the arguments" });
    for (const [name, property] of Object.entries(properties)) {
      form.append(field(name, property, entry.ask.arguments[name], required.has(name)));
    }
    form.append(el("div", { class: "actions" }, el("button", { type: "submit", class: "primary", text: "Approve with these arguments" })));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      let overrides;
      try {
        overrides = readForm(form);
      } catch (error) {
        note(card, error.message, "error");
        return;
      }
      answer(card, entry, { decision: { approved: true, override_arguments: overrides } });
    });
    return form;
  }

  function replyForm(card, entry) {
    const text = el("textarea", { name: "reply", "aria-label": "Your answer in words", placeholder: "e.g. ok, but only half" });
    const form = el("form", { class: "reply", hidden: true, "aria-label": "Answer in words" }, text,
      el("div", { class: "actions" }, el("button", { type: "submit", class: "primary", text: "Send reply" })));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      if (text.value.trim() === "") {
        note(card, "Write an answer first.", "error");
        return;
      }
      answer(card, entry, { reply: text.value });
    });
    return form;
  }

  // Handing the question to another role, a person, or both (app.reassign): it is asked again
  // there under a new id, and leaves this list.
  function handOnForm(card, entry) {
    const role = el("select", { name: "role", "aria-label": "Role" },
      el("option", { value: "", text: "(this role)" }),
      ...(entry.handoffs || []).map((name) => el("option", { value: name, text: name })));
    const to = el("input", { type: "text", name: "to", placeholder: "A person (optional)", "aria-label": "Person" });
    const why = el("input", { type: "text", name: "why", placeholder: "Why (recorded)", "aria-label": "Why" });
    const form = el("form", { class: "hand-on", hidden: true, "aria-label": "Hand on" }, role, to, why,
      el("div", { class: "actions" }, el("button", { type: "submit", class: "primary", text: "Hand on" })));
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      if (why.value.trim() === "") {
        note(card, "Say why it is handed on first.", "error");
        return;
      }
      const body = { pause_ref: entry.pause_ref, reason: why.value.trim() };
      if (role.value) body.role = role.value;
      if (to.value.trim()) body.to = to.value.trim();
      for (const button of card.querySelectorAll("button")) button.disabled = true;
      let response;
      try {
        response = await fetch("reassignments", {
          method: "POST",
          headers: { "Content-Type": "application/json", Accept: "application/json" },
          credentials: "same-origin",
          body: JSON.stringify(body),
        });
      } catch (error) {
        note(card, "The server cannot be reached; nothing was changed. Try again.", "error");
        for (const button of card.querySelectorAll("button")) button.disabled = false;
        return;
      }
      const reply = await response.json().catch(() => ({}));
      if (response.ok) {
        const whom = reply.to ? `${reply.to} (${reply.role})` : reply.role;
        note(card, `Handed to ${whom}: it is asked there now.`, "ok");
        settle(card, "gone");
        return;
      }
      const hint = reply.hint ? ` ${reply.hint}.` : "";
      note(card, `${reply.detail || "It was not handed on."}${hint}`, "error", reply.errors);
      for (const button of card.querySelectorAll("button")) button.disabled = false;
    });
    return form;
  }

  // What the pause asks, by its kind: approve a call, answer the tool's question, or run
  // again a call that may already have run.
  function heading(entry, kind) {
    const tool = el("code", { text: entry.ask.tool });
    if (kind === "interrupted") {
      return el("h2", {}, document.createTextNode(`${entry.agent}'s call of `), tool,
        document.createTextNode(" may already have run (it was cut off mid-call). Run it again?"));
    }
    if (kind === "tool-input") {
      return el("h2", {}, tool, document.createTextNode(` asks ${entry.agent}'s user a question`));
    }
    return el("h2", {}, document.createTextNode(`${entry.agent} asks to run `), tool);
  }

  function card(entry) {
    const rows = Object.entries(entry.ask.arguments).map(([name, value]) =>
      el("tr", {}, el("th", { scope: "row", text: name }), el("td", { text: shown(value) })));
    const waitedFor = el("span", { class: "waited", text: `waiting ${waited(entry.waited_seconds)}` });
    // A question with a deadline says how long is left: its role's on_expiry decides then.
    const expires = entry.expires_in_seconds === null || entry.expires_in_seconds === undefined
      ? null
      : el("span", { class: "expires", text: left(entry.expires_in_seconds) });
    const next = el("span", { class: "next-step", text: nextStep(entry) });
    const votes = entry.votes ? el("span", { class: "votes", text: tally(entry) }) : null;
    const claimed = el("span", { class: "claimed", text: claim(entry) });
    // A question delegated to the caller (app.delegate): they answer it for its owner.
    const delegated = entry.on_behalf_of ? el("span", { class: "for", text: `for ${entry.on_behalf_of}` }) : null;
    // What the question asks, digested: what an answer from this page is recorded against.
    const digest = entry.ask.digest ? el("span", { class: "digest", text: `digest ${entry.ask.digest.slice(0, 12)}` }) : null;
    const kind = entry.ask.kind || "approval";
    const item = el("li", { class: "pause", "data-key": keyOf(entry), "data-tool": entry.ask.tool, "data-kind": kind, "data-state": "waiting" },
      heading(entry, kind),
      el("p", { class: "meta" }, el("span", { text: `channel: ${entry.channel}` }), delegated, waitedFor, expires, next, votes, claimed, digest,
        entry.item_index === null ? null : el("span", { text: `item ${entry.item_index}` })),
      el("table", { class: "arguments" }, ...rows));
    if (!answeredHere(entry)) {
      item.append(el("p", { class: "elsewhere", text: `Answered through ${entry.channel}, not here.` }), el("p", { class: "note" }));
      item.dataset.state = "elsewhere";
      return item;
    }
    const reason = el("input", { type: "text", name: "reason", placeholder: "Reason (the agent reads it)", "aria-label": "Reason" });
    const approve = el("button", { type: "button", class: "approve", text: kind === "interrupted" ? "Run again" : "Approve" });
    const reject = el("button", { type: "button", class: "reject", text: "Reject" });
    // A call that may have run runs again as it was, or not at all: nothing to edit.
    const edit = kind === "interrupted" ? null : el("button", { type: "button", class: "edit", text: "Edit arguments" });
    const actions = el("div", { class: "actions" }, approve, reject, reason, edit);
    const editing = edit ? editForm(item, entry) : null;
    item.append(actions);
    if (editing) item.append(editing);
    approve.addEventListener("click", () => {
      const decision = { approved: true };
      if (reason.value.trim()) decision.reason = reason.value.trim();
      answer(item, entry, { decision });
    });
    reject.addEventListener("click", () => {
      const decision = { approved: false };
      if (reason.value.trim()) decision.reason = reason.value.trim();
      answer(item, entry, { decision });
    });
    if (edit) edit.addEventListener("click", () => { editing.hidden = !editing.hidden; });
    if (kind !== "interrupted") {
      const handOn = el("button", { type: "button", class: "hand-on", text: "Hand on" });
      const handing = handOnForm(item, entry);
      actions.append(handOn);
      item.append(handing);
      handOn.addEventListener("click", () => { handing.hidden = !handing.hidden; });
    }
    if (entry.accepts_reply) {
      const words = el("button", { type: "button", class: "words", text: "Answer in words" });
      const replying = replyForm(item, entry);
      actions.append(words);
      item.append(replying);
      words.addEventListener("click", () => { replying.hidden = !replying.hidden; });
    }
    item.append(el("p", { class: "note" }));
    return item;
  }

  // The cards of one execution stand together, under what was asked of it (its request).
  const requests = new Map();

  function requestOf(entry) {
    const request = entry.request;
    if (request && typeof request === "object" && typeof request.text === "string") return request.text;
    return request == null ? "" : shown(request);
  }

  function group(entry) {
    let header = requests.get(entry.execution_id);
    if (!header) {
      const asked = requestOf(entry);
      header = el("li", { class: "request" },
        el("p", { text: asked ? `Request: ${asked}` : `Execution ${entry.execution_id}` }));
      header.dataset.execution = entry.execution_id;
      requests.set(entry.execution_id, header);
      list.append(header);
    }
    let last = header;
    while (last.nextElementSibling && last.nextElementSibling.dataset.execution === entry.execution_id) {
      last = last.nextElementSibling;
    }
    return last;
  }

  function show(entries) {
    const seen = new Set();
    for (const entry of entries) {
      const key = keyOf(entry);
      seen.add(key);
      const existing = cards.get(key);
      if (existing) {
        existing.querySelector(".waited").textContent = `waiting ${waited(entry.waited_seconds)}`;
        const expires = existing.querySelector(".expires");
        if (expires && entry.expires_in_seconds !== null) expires.textContent = left(entry.expires_in_seconds);
        existing.querySelector(".next-step").textContent = nextStep(entry);
        const votes = existing.querySelector(".votes");
        if (votes) votes.textContent = tally(entry);
        existing.querySelector(".claimed").textContent = claim(entry);
        continue;
      }
      const made = card(entry);
      made.dataset.execution = entry.execution_id;
      cards.set(key, made);
      group(entry).after(made);
    }
    for (const [key, existing] of cards) {
      if (seen.has(key)) continue;
      const state = existing.dataset.state;
      if (state === "waiting" || state === "elsewhere") {
        // Answered on another device, or withdrawn: said on the card, removed after KEEP_MS.
        note(existing, "No longer waiting: answered elsewhere or withdrawn.", "warn");
        settle(existing, "gone");
      } else if (Date.now() - Number(existing.dataset.settledAt) >= KEEP_MS) {
        existing.remove();
        cards.delete(key);
      }
    }
    for (const [execution, header] of requests) {
      const next = header.nextElementSibling;
      if (!next || next.dataset.execution !== execution || !next.classList.contains("pause")) {
        header.remove();
        requests.delete(execution);
      }
    }
    empty.hidden = cards.size > 0;
  }

  // Every page of the inbox, oldest first (at most MAX_PAGES of 200: a screen, not an export).
  const MAX_PAGES = 10;

  async function inbox() {
    const entries = [];
    let after = null;
    for (let page = 0; page < MAX_PAGES; page += 1) {
      const query = new URLSearchParams({ limit: "200" });
      if (after) query.set("after", after);
      const response = await fetch(`pauses?${query}`, { credentials: "same-origin", headers: { Accept: "application/json" } });
      const body = await response.json();
      if (!response.ok) return { problem: body, status: response.status };
      entries.push(...body.entries);
      after = body.next;
      if (!after) break;
    }
    return { entries };
  }

  // The owner's execution trees, newest change first, and what each waits on.
  const executionsList = document.getElementById("executions");

  function waitsOn(execution) {
    if (execution.waiting_on.length) {
      return "waits on " + execution.waiting_on.map((question) => `${question.tool} (${question.channel})`).join(", ");
    }
    if (execution.wakes_at) {
      const at = new Date(execution.wakes_at).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
      return `waits until ${at} (a retry)`;
    }
    return "";
  }

  async function executions() {
    const response = await fetch("executions?limit=50", { credentials: "same-origin", headers: { Accept: "application/json" } });
    if (!response.ok) return;
    const body = await response.json();
    executionsList.replaceChildren(...body.entries.map((execution) =>
      el("li", { class: "execution", "data-execution": execution.execution_id, "data-status": execution.status },
        el("span", { class: "workflow", text: execution.workflow }),
        el("span", { class: "status", text: execution.status }),
        el("span", { class: "waits-on", text: waitsOn(execution) }))));
  }

  async function refresh() {
    executions().catch(() => {}); // the list of executions is a view: the questions come first
    let read;
    try {
      read = await inbox();
    } catch (error) {
      status.textContent = "The server cannot be reached (it may have stopped); retrying.";
      status.className = "error";
      return;
    }
    if (read.problem) {
      status.textContent = `${read.problem.detail || "The list cannot be read"} (${read.problem.code || read.status})`;
      status.className = "error";
      return;
    }
    show(read.entries); // a failure here is the page's own: it surfaces as an error, not as "offline"
    const mine = read.entries.filter(answeredHere).length;
    const theirs = read.entries.length - mine;
    status.textContent = theirs
      ? `${read.entries.length} waiting: ${mine} for you, ${theirs} through their channels`
      : `${mine} waiting for you`;
    status.className = "";
  }

  refresh();
  setInterval(refresh, pollMs);
})();
