// activetest labelling page: one file, no framework, no network beyond its own server.
// Item text is only ever put into the page with textContent: no HTML from an item runs.
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const NAME_KEY = "activetest-annotator:" + location.pathname;
  let state = null;        // api/state
  let me = null;           // {annotator, adjudicator}
  let item = null;         // the item shown
  let picks = [];          // levels picked for the answers shown (paired: one per answer)
  let busy = false;
  let mode = "label";      // "label" or "adjudicate"
  let disputes = [];       // adjudication: the disagreements left
  let dispute = null;
  let pressed = null;      // when the last answer key was pressed (for the timings)
  // per answer: milliseconds from the key press to the next item on screen (read by
  // benchmarks/label_page.py; nothing is sent anywhere)
  window.activetestTimings = [];

  function setState(s) {
    document.body.dataset.state = s;
    if (me) { showActions(); }
  }

  async function api(method, name, body) {
    const opts = { method: method, headers: {}, cache: "no-store" };
    if (body !== undefined) {
      opts.headers["Content-Type"] = "application/json";
      // every call names the session this page was loaded for: a server restarted at
      // this address with another session stores nothing of this page's (HTTP 421)
      const sid = state && state.session_id ? { session_id: state.session_id } : {};
      opts.body = JSON.stringify(Object.assign(sid, body));
    }
    let r;
    try { r = await fetch("api/" + name, opts); } catch (e) {
      const err = new Error("the server does not answer (" + e.message + ")");
      err.network = true;
      throw err;
    }
    let data;
    try { data = await r.json(); } catch (e) { data = { error: "the server answered " + r.status }; }
    if (!r.ok) {
      const err = new Error(data.error || ("the server answered " + r.status));
      err.status = r.status;
      throw err;
    }
    return data;
  }

  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) { e.textContent = String(text); }
    if (cls) { e.className = cls; }
    return e;
  }

  function auto(e) { e.dir = "auto"; return e; }  // a text of its own direction

  // A status message: a text, or a list of texts and elements, an item id or a name
  // each in a <bdi> (bdi below): a right-to-left id is laid out on its own and the words
  // and numbers around it keep their order (QA: in "saved item <Hebrew id>: positive"
  // the id took the words after it into its direction). textContent reads the same.
  function say(text, kind) {
    const m = $("message");
    m.textContent = "";
    if (Array.isArray(text)) { m.append(...text); } else { m.textContent = text || ""; }
    m.className = kind || "";
  }

  function bdi(text) { return el("bdi", text); }  // a text isolated in its own direction

  // Every number on the progress line has 4 decimals, fixed (more where an interval is
  // too narrow for 4, below), as `activetest estimate`
  // and `status` print them (session/records._fixed4): the page and the terminal agree
  // to the digit, and intervals side by side line up (QA: toPrecision(4) gave "[0.000,
  // 4.879]" beside "[0.06278, 4.321]"); a -0.0000 reads 0.0000, as there.
  // An interval wider than a point (1e-9) gets as many more decimals (up to 12) as its two
  // ends need to differ, and its estimate as many, as the terminal prints them
  // (session/interval_names.interval_decimals; QA: "[0.0012, 0.0012]" 3e-5 wide).
  function unsignedZero(t) { return /^-0\.0*$/.test(t) ? t.slice(1) : t; }

  // signed: keep the minus of a value that rounds to zero (an interval's end, range)
  function fmt(x, digits, signed) {
    if (x === null || x === undefined) { return "\u2014"; }
    const t = Number(x).toFixed(digits || 4);
    return signed ? t : unsignedZero(t);
  }

  function decimals(...pairs) {
    let d = 4;
    for (const [low, high] of pairs) {
      if (low === null || high === null || low === undefined || high === undefined ||
          !isFinite(low) || !isFinite(high) || Math.abs(high - low) <= 1e-9) { continue; }
      let need = d;
      // "-0.0000" and "0.0000" print alike (a lone -0.0000 reads 0.0000)
      while (need <= 12 && unsignedZero(Number(low).toFixed(need)) ===
             unsignedZero(Number(high).toFixed(need))) { need++; }
      if (need <= 12) { d = need; }
    }
    return d;
  }

  // an end that rounds to zero keeps its minus where the other end shows one, as
  // session/interval_names.interval_text ("[-0.0100, -0.0000]": wholly below 0)
  function range(low, high) {
    if (low === null || low === undefined || high === null || high === undefined) {
      return "[" + fmt(low) + ", " + fmt(high) + "]";
    }
    const d = decimals([low, high]);
    let lo = fmt(low, d, true), hi = fmt(high, d, true);
    if (!lo.startsWith("-")) { hi = unsignedZero(hi); }
    if (!hi.startsWith("-")) { lo = unsignedZero(lo); }
    return "[" + lo + ", " + hi + "]";
  }

  // ---------------------------------------------------------------- rendering

  function letter(i) { return String.fromCharCode(65 + i); }

  function render(it, votes) {
    item = it;
    picks = [];
    typed = "";  // digits typed for the item before
    $("done").hidden = true;
    $("card").hidden = false;
    document.body.dataset.item = it.item_id;
    const meta = $("meta");
    meta.textContent = "";
    // the id in a <bdi>: a right-to-left id (Hebrew, Arabic) is laid out on its own and
    // the line keeps its order, "item <id> · draw N" (QA: the id's direction spilled into
    // the words and numbers around it)
    const line = el("span", (mode === "adjudicate" ? "adjudicate: " : "") + "item ");
    line.append(el("bdi", it.item_id), " \u00b7 draw " + it.step);
    meta.append(line);
    if (it.need > 1) { meta.append(el("span", " \u00b7 asked of " + it.need + " annotators")); }
    if (it.again) { meta.append(el("span", " \u00b7 set aside earlier: a second look")); }
    const dl = $("fields");
    dl.textContent = "";
    // each text takes its own direction from its first letters (dir=auto): a Hebrew or
    // Arabic item reads right to left, its full stop and numbers in place (QA: shown
    // left to right, "123" and "." moved to the wrong end)
    for (const [k, v] of it.fields) {
      dl.append(auto(el("dt", k)));
      dl.append(auto(el("dd", v, k === "text" ? "text" : "")));
    }
    const box = $("answers");
    box.textContent = "";
    it.answers.forEach((a, i) => {
      const div = el("div", null, "answer");
      const title = it.answers.length > 1 ? "Answer " + letter(i) : "Answer to judge";
      const h = el("h3", title);
      h.append(el("span", "", "given"));
      div.append(h);
      div.append(auto(el("div", a, "body")));
      box.append(div);
    });
    const g = $("guess");
    if (it.guess) {
      g.hidden = false;
      g.textContent = "surrogate's guess: " + it.guess[0] + " (" + (100 * it.guess[1]).toFixed(0) + "%)";
    } else { g.hidden = true; g.textContent = ""; }
    const v = $("votes");
    v.textContent = "";
    v.hidden = !votes;
    if (votes) {
      v.append(el("strong", "Annotators said: "));
      v.append(auto(el("span", votes)));
    }
    showPicks();
    setState("ready");
    // the new item from its start: after a long item read to its end (the buttons under
    // it) the page stayed scrolled down, and the next item showed from its middle (QA)
    const top = $("card").getBoundingClientRect().top;
    if (top < 0) { $("card").scrollIntoView({ block: "start" }); }
    if (pressed !== null) {
      window.activetestTimings.push(performance.now() - pressed);
      pressed = null;
    }
  }

  function showPicks(back) {
    const n = item ? Math.max(1, item.answers.length) : 1;
    const names = state.levels;
    document.querySelectorAll(".answer").forEach((div, i) => {
      div.classList.toggle("current", n > 1 && i === picks.length);
      div.querySelector(".given").textContent = i < picks.length ? names[picks[i] - 1] : "";
    });
    // the answer to judge next is brought into view once one is judged (or Backspace
    // goes back): after a long answer A, B was pages further down, and nothing in view
    // said that the key had counted (QA)
    const cur = document.querySelector(".answer.current");
    if (cur && picks.length + (back ? 1 : 0) > 0) {
      const r = cur.getBoundingClientRect();
      if (r.top < 0 || r.top > window.innerHeight - 48) { cur.scrollIntoView({ block: "start" }); }
    }
    const p = $("picked");
    p.textContent = n > 1 ? (picks.length < n ? "judging answer " + letter(picks.length) + " of " +
      n + (picks.length ? " (Backspace: back)" : "") : "") : "";
  }

  function renderChoices() {
    const c = $("choices");
    c.textContent = "";
    state.levels.forEach((name, i) => {
      const b = el("button");
      b.type = "button";
      b.append(el("kbd", String(i + 1)));
      b.append(document.createTextNode(name));
      // the button does not keep the focus: a later Space or Enter would press it again,
      // answering the next item, unseen (QA)
      b.addEventListener("click", (e) => { e.currentTarget.blur(); pick(i + 1); });
      c.append(b);
    });
  }

  function renderHelp() {
    const t = $("keys");
    t.textContent = "";
    const rows = state.levels.map((name, i) => [String(i + 1), name]);
    if (state.n_answers > 1) {
      rows.push(["", "answers A, B, ... are judged in turn, each with a key"]);
      rows.push(["Backspace", "back to the previous answer of this item"]);
    }
    rows.push(["u", "undo your last answer (the item comes back)"]);
    rows.push(["s", "skip: set the item aside for a second look"]);
    if (me && me.adjudicator) { rows.push(["a", "adjudicate disagreements (a again: back)"]); }
    rows.push(["?", "this help"]);
    for (const [k, what] of rows) {
      const tr = el("tr");
      const td = el("td");
      if (k) { td.append(el("kbd", k)); }
      tr.append(td);
      tr.append(el("td", what));
      t.append(tr);
    }
    const silent = state.silent_seconds;
    $("help-claims").textContent = "The item shown and the next ones are kept for you " +
      "while this page is open. Closing the page gives them back to the other annotators " +
      "at once; a page the server has not heard from for " + (typeof silent === "number" ?
        (silent < 90 ? Math.round(silent) + " s" : Math.round(silent / 60) + " min") :
        "a while") + " (the tab crashed, the computer slept, the network is down) gives " +
      "them back too; heard from again, it gets back those nobody took meanwhile. An " +
      "answer to one another annotator took is still stored, unless enough others " +
      "answered it (then it is refused, and the page says so).";
  }

  function done(text) {
    item = null;
    delete document.body.dataset.item;
    $("card").hidden = true;
    const d = $("done");
    d.hidden = false;
    d.textContent = text;
    setState("done");
  }

  // the progress line is fetched once the person pauses (a quarter second after the
  // last item shown): its estimate then never competes with the next answer
  let progressTimer = null;
  function refreshProgress() {
    if (progressTimer !== null) { clearTimeout(progressTimer); }
    progressTimer = setTimeout(() => { progressTimer = null; loadProgress(); }, 250);
  }

  async function loadProgress() {
    try {
      const p = await api("GET", "progress");
      const f = $("progress");
      f.textContent = "";
      // without a budget the draws so far are no total (QA: "draw 8 of 10" with 10
      // drawn so far, of a pool of 1000)
      const label = item && mode === "label";
      const shown = p.budget !== null ?
        (label ? "draw " + item.step + " of the budget's " + p.budget :
          p.n_selected + " of the budget's " + p.budget + " drawn") :
        (label ? "draw " + item.step + " (" : "") + p.n_selected + " drawn so far" +
          (label ? "; " : " (") + "no budget: up to the pool's " + p.n_pool + ")";
      f.append(el("span", shown));
      f.append(el("span", p.n_labels + " label(s) used by the estimate (pool " + p.n_pool + ")"));
      if (!p.metrics.length && p.note) {
        // why, once items are drawn (QA: only "no estimate yet" while the first draw had
        // two differing answers and no label, which no one was asked to settle)
        f.append(el("span", "no estimate yet" + (p.n_selected ? " (" + p.note + ")" : "")));
      }
      // whose estimate: a paired page is blind on purpose (docs/labelling.md): answers A
      // and B are shown without model names, in a random order per item, so that the
      // judgments are not swayed by whose answer it is. The line names the model under
      // evaluation as such, never by name nor by letter (the estimate is its, not the
      // compared model's: that one's is in `estimate --compare`)
      const whose = state && state.layout === "paired" ?
        " of the model under evaluation (its answer is A or B, not said which: blind)" : "";
      for (const m of p.metrics) {
        const parts = [m.metric.replace("_", " ") + whose + ": " + m.estimator + " " +
          fmt(m.estimate, decimals([m.fixed_low, m.fixed_high], [m.cs_low, m.cs_high],
            [m.exact_low, m.exact_high]))];
        // each interval under the name of the one shown: where the exact anytime CS
        // stands in for the fixed-budget interval and the anytime CS (few errors
        // labelled), it is named as such, with what it stands in for (QA: its bounds
        // were shown under the CLT intervals' names, three times, and only a note at
        // the end said so); the anytime CS is its intersection over the counts so far,
        // shown apart only where that differs
        const exact = m.basis === "exact";
        if (exact) {
          const fixed = range(m.fixed_low, m.fixed_high);
          const cs = range(m.cs_low, m.cs_high);
          parts.push(m.exact_name + " " + fixed + " (stands in for the " + m.fixed_name +
            (cs === fixed ? " and the " + m.anytime_name + ")" : ")"));
          if (cs !== fixed) {
            parts.push(m.exact_name + ", intersected over the label counts so far, " + cs +
              " (stands in for the " + m.anytime_name + ")");
          }
        } else {
          // one label has no spread: the fixed-budget interval needs two or more, said as
          // the CS's "(from 30 labels)" is (QA: "[—, —]" at one label)
          const early = p.n_labels < 2 && m.fixed_low === null && m.fixed_high === null;
          parts.push(m.fixed_name + (early ? " (from 2 labels)" :
            " " + range(m.fixed_low, m.fixed_high)),
            m.anytime_name + (m.cs_low === null ? " (from 30 labels)" :
              " " + range(m.cs_low, m.cs_high)));
          if (m.exact_name !== null && m.exact_low !== null) {
            parts.push(m.exact_name + " " + range(m.exact_low, m.exact_high));
          }
        }
        if (m.basis_note) { parts.push(m.basis_note); }
        f.append(el("span", parts.join(" \u00b7 ")));
        if (m.may_stop) {
          f.append(el("span", m.metric.replace("_", " ") + ": you may stop now (the " +
            (exact ? m.exact_name : "anytime interval") + " is narrower than " +
            m.target_width + ")", "stop"));
        }
      }
      if (p.waiting) {  // labels waiting for an earlier draw: its id in a <bdi> (see say)
        const w = p.waiting;
        const line = el("span", null, "note");
        line.append("note: " + w.n_waiting + " label(s) of later draws wait for ",
          ...(w.item_id === null ? ["an earlier draw"] :
            ["item ", bdi(w.item_id), " (draw " + w.step + ")"]),
          " to be labelled; the estimate uses the first " + w.n_labels + " draws");
        f.append(line);
      }
      for (const n of (p.notes || [])) { f.append(el("span", "note: " + n, "note")); }
    } catch (e) { /* the progress line waits for the next answer */ }
  }

  // ---------------------------------------------------------------- actions
  //
  // The page keeps the next items at hand (the server claims them for this person with
  // the one shown): an answer shows the next at once and is sent behind, one call at a
  // time, in order (answers that waited behind a slow reply go together). "saved" is said only when the server has committed the answer; until then
  // the answer is kept in this tab (sessionStorage), so a reload sends it again (an
  // answer sent twice is stored once), and a server that does not answer is asked
  // again every 2 s. The draw of a new batch waits for the last answer of the batch,
  // as in the terminal.

  const AHEAD = 2;                 // items held beyond the one shown
  const OUTBOX_KEY = "activetest-outbox:" + location.pathname;
  let queue = [];                  // items held beyond the one shown, in order
  let outbox = [];                 // answers not yet confirmed: {annotator, item_id, levels, session}
  let parked = [];                 // answers for another session than the one served: kept
  let chain = Promise.resolve();   // the calls to the server, one after another
  let calls = 0;                   // calls queued or running
  let undoWaits = null;            // an undo behind answers not sent yet: the last of them
  // Skips the server has not taken, kept in this tab as answers are (a reload sends them
  // again; a skip made twice is one), not refused while the server cannot be reached:
  // the page goes on through the items at hand then, and s is one of its keys (QA: "set
  // aside" was said, and a reload before the server was back lost the skip)
  const SKIPS_KEY = "activetest-skips:" + location.pathname;
  let skips = [];                  // {annotator, item_id, session}
  // an undo waiting for answers to be sent, kept in this tab: a reload says it was not
  // done (it is not made again: the answers then sent with it may not end with the one
  // it was meant for) (QA: a reload lost it without a word)
  const UNDO_KEY = "activetest-undo:" + location.pathname;
  window.activetestSaveTimings = [];  // ms from the key press to "saved"

  function keepSkips() {
    document.body.dataset.skipping = String(skips.length);
    try { sessionStorage.setItem(SKIPS_KEY, JSON.stringify(skips)); } catch (e) { /* private */ }
    showUnsent(false);
  }

  function keepUndo() {
    try {
      if (undoWaits) { sessionStorage.setItem(UNDO_KEY, JSON.stringify({ item_id: undoWaits.item_id })); }
      else { sessionStorage.removeItem(UNDO_KEY); }
    } catch (e) { /* private */ }
  }

  function keepOutbox() {
    document.body.dataset.saving = String(outbox.length);
    try { sessionStorage.setItem(OUTBOX_KEY, JSON.stringify(outbox.concat(parked))); } catch (e) { /* private */ }
    showUnsent(false);
    showUndo();
  }

  // the answers the server has not taken, at the top of the page once a send failed,
  // until every one is sent (QA: only the message line said so, and the next message,
  // an undo's or a skip's, hid it; the help said every answer was saved at once)
  let unsentShown = false;
  function showUnsent(failed) {
    const n = outbox.length + parked.length;
    unsentShown = n + skips.length > 0 && (unsentShown || failed);
    const u = $("unsent");
    u.hidden = !unsentShown;
    const sk = skips.length ? skips.length + " skip(s) not taken by the server yet: kept in " +
      "this tab and sent again" : "";
    u.textContent = !unsentShown ? "" : !n ? sk : n + " answer(s) not saved yet: kept in " +
      "this tab (do not close it)" + (outbox.length ? ", sent again until the server takes " +
      "them" : "") + (parked.length ? "; " + parked.length + " of them not sent here (for " +
      "another session or name: see below)" : "") + (undoWaits ? "; your undo is done once " +
      "they are sent" : "") + (sk ? "; " + sk : "");
  }

  // the undo button says when an undo waits for the answers before it to be sent
  function showUndo() {
    $("undo-label").textContent = undoWaits ? "undo waits for " + outbox.length +
      " answer(s) to be sent" : "undo my last answer";
  }

  function later(task) {   // the server hears this page's calls in the order they were made
    calls += 1;
    chain = chain.then(task).catch((e) => say(e.message, "error")).finally(() => { calls -= 1; });
    return chain;
  }

  async function run(fn) {   // a call that shows nothing new until it is answered
    if (busy) { return; }
    busy = true;
    setState("busy");
    await later(async () => {
      try { await fn(); } catch (e) { say(e.message, "error"); if (item) { setState("ready"); } }
      finally { busy = false; if (document.body.dataset.state === "busy" && item) { setState("ready"); } }
    });
  }

  function advance() {      // the next item at hand, or wait for the server's
    if (queue.length) { render(queue.shift()); return; }
    waiting();
  }

  // no item at hand: the item answered last leaves the screen (QA: it stayed there, its
  // buttons live-looking, while the answers waited for a server that did not answer)
  function waiting() {
    item = null;
    delete document.body.dataset.item;
    $("card").hidden = true;
    const d = $("done");
    d.hidden = false;
    d.textContent = "Waiting for the server for your next item\u2026 (an answer not saved " +
      "yet is kept in this tab until the server confirms it)";
    setState("busy");
  }

  function adopt(r) {       // the items the server holds for this person now
    const held = r.item ? [r.item].concat(r.ahead || []) : [];
    const unsent = new Set(outbox.map((e) => e.item_id));
    queue = held.filter((x) => !(item && x.item_id === item.item_id) && !unsent.has(x.item_id));
    if (!item) {
      if (queue.length) { render(queue.shift()); }
      else if (!outbox.length && calls <= 1 && r.others_hold) {
        // others hold drawn items unanswered: not the end (QA: "every drawn item has its
        // answers" was said, and the page never asked again when their claims lapsed)
        const lapse = r.lapse_seconds < 90 ? Math.ceil(r.lapse_seconds) + " s" :
          "about " + Math.ceil(r.lapse_seconds / 60) + " min";
        done("Nothing for you right now: " + r.others_hold + " drawn item(s) are held by " +
             "other annotators and not answered yet; one comes to you if they give it " +
             "back (skip it, close their page) or its claim lapses (the first in " + lapse +
             "). Keep this page open: it asks again as soon as another annotator answers " +
             "or gives an item back." + unsettledText(r));
        askAgain(r);
      } else if (!outbox.length && calls <= 1 && r.others_needed) {
        // items asked of several annotators wait for the others' answers: not "every drawn
        // item has its answers" (QA: said while every item waited for a second annotator)
        done("Nothing left to label for you: you answered every drawn item you may, and " +
             r.others_needed + " of them ask for another annotator's answer as well (not " +
             "yours again); the budget is reached (or the pool is drawn). Thank you." +
             unsettledText(r));
      } else if (!outbox.length && calls <= 1) {
        done("Nothing left to label for you: every drawn item has its answers and the budget " +
             "is reached (or the pool is drawn). Thank you." + unsettledText(r));
      }
    }
    refreshProgress();
  }

  // drawn items whose answers differ and settle no label: the estimate waits at the
  // first of them, and no one is asked for them again (QA: the page said only that every
  // drawn item has its answers)
  function unsettledText(r) {
    if (!r.unsettled) { return ""; }
    return " " + r.unsettled + " drawn item(s) have differing answers and no label, so the " +
      "estimate waits for them: " + (r.adjudication ? "an adjudicator of this page settles " +
      "them (key a)." : "they need an adjudicator (activetest serve --adjudicator NAME) or " +
      "another --resolve rule.");
  }

  // "nothing for you right now": the server answers api/wait as soon as another
  // annotator answers, skips, undoes or gives items back, else when the first of their
  // claims lapses (at most 25 s); then the page asks for its next item, never more often
  // than once a second (QA: it asked every 30 s, whatever the others did)
  // A browser opens only 6 connections to one address: the server holds at most two
  // waits of one browser open (the id below, the same in all its tabs) and answers a
  // further tab's at once ("crowded"); that tab asks again after CROWDED_MS, or as soon
  // as another tab's wait says something changed (QA: with 6 tabs waiting, an answer
  // given in a 7th waited up to 25 s to be sent, and a 7th tab did not load)
  const CROWDED_MS = 4000;
  let BROWSER = Math.random().toString(36).slice(2);
  try {
    const known = localStorage.getItem("activetest-browser");
    if (known && /^[A-Za-z0-9_-]{1,64}$/.test(known)) { BROWSER = known; }
    else { localStorage.setItem("activetest-browser", BROWSER); }
  } catch (e) { /* private mode: this tab's own id */ }
  let wake = null;                 // ends a crowded tab's timer (another tab was woken)
  let asking = 0;                  // the newest wait: an older one's answer is ignored
  async function askAgain(r) {
    const id = ++asking;
    const t0 = performance.now();
    const lapse = typeof r.lapse_seconds === "number" ? r.lapse_seconds + 0.5 : 25;
    const seconds = Math.min(25, Math.max(1, lapse));
    let w = null;
    document.body.dataset.wait = "held";  // (for the tests: held open, or crowded)
    try {
      w = await api("POST", "wait", { since: r.changes, seconds: seconds, browser: BROWSER });
    } catch (e) { /* no server: the next ask says so and asks again every 2 s */ }
    document.body.dataset.wait = w && w.crowded ? "crowded" : "answered";
    if (w && w.changed && !w.crowded) { announce("changed"); }  // the crowded tabs ask
    if (w && w.crowded && !w.changed) {
      await new Promise((ok) => {
        const t = setTimeout(ok, Math.min(CROWDED_MS, seconds * 1000));
        wake = () => { clearTimeout(t); ok(); };
      });
      wake = null;
    }
    const left = 1000 - (performance.now() - t0);
    if (left > 0) { await sleep(left); }
    if (id === asking && !item && mode === "label" && document.body.dataset.state === "done") {
      next();
    }
  }

  function next() {
    queue = [];
    waiting();
    return later(async () => { adopt(await askNext()); });
  }

  function sleep(ms) { return new Promise((ok) => setTimeout(ok, ms)); }

  // why the server cannot take a call now, though it may in a moment (null: it refused
  // the call for good, or took it): nothing was stored, the call is made again
  function notNow(e) {
    if (e.network) { return "the server does not answer"; }
    if (e.status === 421) { return e.message; }  // another session served here now
    // a fault in the server (500): its transaction was undone, nothing stored; the call
    // is made again (QA: the answers were dropped from the tab, "not saved")
    if (e.status === 500) { return "the server failed (" + e.message + "); nothing was stored"; }
    if (e.status === 404) {   // the server was restarted: a new token unless --token kept it
      return "this page's address is no longer served (was activetest serve restarted? " +
        "restart it with --port " + (location.port || "80") + " --token " +
        location.pathname.split("/")[2] + " to serve it again)";
    }
    // another process holds the session's lock, the file cannot be written now (a full
    // disk, a write error), or the server is stopping (one started again at this
    // address takes the call)
    return e.status === 503 ? e.message : null;
  }

  // a call the page cannot go on without (what to show next, a skip): made again every
  // 2 s while the server cannot take it (QA: with the server down a moment, the page
  // waiting for others' items, or a skip of the last item, stayed busy for ever)
  async function patiently(name, body) {
    for (;;) {
      try {
        const r = await api("POST", name, body);
        unpark();
        return r;
      } catch (e) {
        const why = notNow(e);
        if (why === null) { throw e; }
        say(why + ": asked again in 2 s", "error");
        showUnsent(true);  // what the tab keeps meanwhile (answers, skips), at the top
        await sleep(2000);
      }
    }
  }

  // answers kept for this page's own session while another was served here: sent once
  // the address serves this page's session again
  function takeBackParked() {  // this page's own session's kept answers, to send first
    const back = parked.filter((x) => x.session === state.session_id &&
                                      x.annotator === me.annotator);
    parked = parked.filter((x) => !back.includes(x));
    outbox = back.concat(outbox);
    return back.length;
  }

  function unpark() {
    if (takeBackParked()) { keepOutbox(); later(flush); }
  }

  function askNext() { return patiently("next", { annotator: me.annotator, ahead: AHEAD }); }

  // every answer waiting to be sent, in one call (one commit): usually the one just
  // given; several when they waited behind a slow reply
  async function flush() {
    takeBackParked();  // kept while another session was served here: tried again
    const batch = outbox.slice();
    if (!batch.length) {  // an earlier call sent them, and its reply may have found this
      // call still queued (so it showed nothing: the last word was this call's): with no
      // item shown, ask the server what is next (QA: the page stayed busy for ever when
      // the last two answers were sent together)
      if (!item && mode === "label" && calls <= 1) { adopt(await askNext()); }
      return;
    }
    let r;
    for (;;) {
      try {
        r = await api("POST", "answers", { annotator: me.annotator, ahead: AHEAD,
          answers: batch.map((e) => ({ item_id: e.item_id, levels: e.levels })) });
        break;
      } catch (e) {
        // nothing was stored: the answers stay here and are sent again (QA: they were
        // dropped on a 404 or a 503, and the next call's error hid the message)
        if (e.status === 421) {  // this address serves another session now: the answers
          // are kept in this tab for their own session, never sent to this one (QA: they
          // were stored in whatever session was served at this port and token)
          batch.forEach((x) => { x.refused = true; });  // (not in the tab's copy)
          parked = parked.concat(batch);
          outbox = outbox.filter((x) => !batch.includes(x));
          keepOutbox();
          showUnsent(true);
          say(e.message + " (" + parked.length + " answer(s) kept in this tab for their " +
              "own session)", "error");
          return;
        }
        const why = notNow(e);
        if (why === null) {  // refused as a whole (a bad request, ...): say why
          batch.forEach((x) => { x.refused = true; });
          outbox = outbox.filter((x) => !batch.includes(x));
          keepOutbox();
          say(e.message + " (" + batch.length + " answer(s) not saved)", "error");
          if (!item && !outbox.length) { adopt(await askNext()); }
          return;
        }
        say(why + ": " + outbox.length + " answer(s) not saved yet, kept in this tab and " +
            "sent again in 2 s", "error");
        showUnsent(true);
        await sleep(2000);
      }
    }
    outbox = outbox.filter((x) => !batch.includes(x));
    keepOutbox();
    const refused = [];
    r.results.forEach((res, k) => {
      const entry = batch[k];
      entry.refused = Boolean(res.error);  // (an undo waiting behind it asks)
      if (res.error) { refused.push(res.error); return; }
      if (entry.at !== undefined) { window.activetestSaveTimings.push(performance.now() - entry.at); }
      say(["saved item ", bdi(entry.item_id), ": " +
           entry.levels.map((v) => state.levels[v - 1]).join(", ")], "ok");
    });
    if (refused.length) { say(refused.join("; "), "error"); }  // not saved: why
    if (r.next_error) {  // saved, but no next item could be drawn: both said (QA: the
      // answers were called "not saved" and dropped from the tab)
      say(batch.length - refused.length + " answer(s) saved; the next item could not be " +
          "drawn: " + r.next_error, "error");
      if (!item) { adopt(await askNext()); }
      return;
    }
    adopt(r);
  }

  function pick(n) {
    if (!item || n < 1 || n > state.levels.length) { return; }
    if (mode === "adjudicate" && busy) { return; }
    picks.push(n);
    showPicks();
    if (picks.length < Math.max(1, item.answers.length)) { return; }
    const levels = picks.slice();
    const id = item.item_id;
    if (mode === "adjudicate") {
      run(async () => {
        await api("POST", "adjudicate", { annotator: me.annotator, item_id: id, levels: levels });
        say(["settled item ", bdi(id)], "ok");
        refreshProgress();  // the settled label counts now (QA: the line stayed stale)
        disputes.shift();
        return showDispute();
      });
      return;
    }
    pressed = performance.now();
    const entry = { annotator: me.annotator, item_id: id, levels: levels,
                    session: state.session_id };
    outbox.push(entry);
    keepOutbox();
    entry.at = pressed;   // not stored: a time of this page only
    say(["saving item ", bdi(id), " \u2026"]);
    advance();
    later(flush);
  }

  // An undo is made after the answers given before it are sent (the server undoes the
  // last answer it stored): while they wait for the server, the page says so, on the
  // undo button and at the top, and a second u adds no second undo; should the last of
  // them be refused, nothing is undone (the answer before it is not the one meant) (QA:
  // u said nothing until they were sent, and each further u undid one more answer then)
  function undo() {
    if (undoWaits) {
      say("an undo already waits for " + outbox.length + " answer(s) to be sent; press u " +
          "again once it is done to undo one more", "error");
      return;
    }
    const last = outbox.length ? outbox[outbox.length - 1] : null;
    if (last) {
      undoWaits = last;
      keepUndo();
      showUndo();
      showUnsent(false);
      say(["undo waits for " + outbox.length + " answer(s) to be sent; then item ",
           bdi(last.item_id), " is undone"]);
    }
    later(async () => {
      try {
        if (last && last.refused) {
          say(["nothing undone: your last answer (item ", bdi(last.item_id), ") was not " +
               "saved here (see the message before)"], "error");
          return;
        }
        // waits no more: a reload from now on does not say it was not done (it may be)
        try { sessionStorage.removeItem(UNDO_KEY); } catch (e) { /* private */ }
        const r = await api("POST", "undo", { annotator: me.annotator });
        if (!r.item) {
          say("nothing to undo");
          if (!item && !outbox.length) { adopt(await askNext()); }
          return;
        }
        say(["undone: item ", bdi(r.item.item_id), " is unanswered again"], "ok");
        if (item && item.item_id !== r.item.item_id) { queue.unshift(item); }
        queue = queue.filter((x) => x.item_id !== r.item.item_id);
        render(r.item);
        refreshProgress();
      } finally {
        undoWaits = null;
        keepUndo();
        showUndo();
        showUnsent(false);
      }
    });
  }

  function skip() {
    if (!item) { return; }
    const id = item.item_id;
    say(["set aside item ", bdi(id), " (it comes back after the others)"]);
    const entry = { annotator: me.annotator, item_id: id, session: state.session_id };
    skips.push(entry);
    keepSkips();
    advance();
    sendSkip(entry, true);
  }

  function sendSkip(entry, andNext) {   // kept in the tab until the server takes it
    later(async () => {
      let r;
      try {
        r = await patiently("skip", { annotator: entry.annotator, item_id: entry.item_id,
                                      next: andNext, ahead: AHEAD });
      } finally {  // taken, or refused for good (said): not kept
        skips = skips.filter((x) => x !== entry);
        keepSkips();
      }
      if (andNext) { adopt(r); }
    });
  }

  async function showDispute() {
    dispute = disputes.length ? disputes[0] : null;
    if (!dispute) { done("No disagreement left to settle. Press a to label again."); return; }
    const votes = dispute.votes.map((v) => v[0] + ": " + v[1]).join(", ") +
      " (now: " + (dispute.settled || "unlabelled") + ", " + dispute.how + ")";
    render(dispute.shown, votes);
  }

  function adjudicate() {
    if (!me.adjudicator) { return; }
    if (mode === "adjudicate") { mode = "label"; say(""); next(); return; }
    mode = "adjudicate";
    run(async () => {
      const r = await api("POST", "disagreements", { annotator: me.annotator });
      const seen = {};
      disputes = [];
      for (const d of r.disagreements) {   // one entry per item: all its answers at once
        if (seen[d.item_id]) { continue; }
        seen[d.item_id] = true;
        d.shown = r.order[d.item_id];
        disputes.push(d);
      }
      say(disputes.length + " item(s) with disagreements");
      return showDispute();
    });
  }

  // undo and skip without a keyboard (QA: on a touch screen a wrong tap could not be
  // taken back, nor an item set aside)
  let actionsBound = false;
  function renderActions() {
    if (actionsBound) { showActions(); return; }
    actionsBound = true;
    const act = (id, fn) => $(id).addEventListener("click", (e) => {
      e.currentTarget.blur();
      if (mode === "label") { fn(); }
    });
    act("undo-button", undo);
    act("skip-button", skip);
    showActions();
  }

  function showActions() {
    $("actions").hidden = !me || mode !== "label";
    $("skip-button").hidden = !item;
  }

  function toggleHelp(show) {
    const h = $("help");
    h.hidden = show === undefined ? !h.hidden : !show;
    if (h.hidden && $("message").textContent === HELP_COVERS) { say(""); }
  }

  // With more than 9 levels a number takes two keys: the digits typed are held until
  // no further digit could make another level, Enter, or a pause (QA: "12" labelled the
  // item shown 1 and the next, unseen, 2)
  let typed = "";
  let typedTimer = null;
  function typedDone() {
    if (typedTimer !== null) { clearTimeout(typedTimer); typedTimer = null; }
    const n = parseInt(typed, 10);
    typed = "";
    showPicks();
    if (n >= 1) { pick(n); }
  }
  function digit(k) {
    const C = state.levels.length;
    if (C <= 9) { if (k !== "0") { pick(parseInt(k, 10)); } return; }
    if (!typed && k === "0") { return; }
    typed += k;
    if (parseInt(typed, 10) > C) {
      say("no level " + typed + ": keys 1 to " + C, "error");
      typed = "";
      if (typedTimer !== null) { clearTimeout(typedTimer); typedTimer = null; }
      showPicks();
      return;
    }
    if (parseInt(typed, 10) * 10 > C) { typedDone(); return; }  // no second digit fits
    $("picked").textContent = "typed " + typed + " (Enter, or a second digit)";
    if (typedTimer !== null) { clearTimeout(typedTimer); }
    typedTimer = setTimeout(typedDone, 1200);
  }

  const HELP_COVERS = "the help covers the item: Esc or ? closes it first";
  function onKey(e) {
    if (!me || e.ctrlKey || e.metaKey || e.altKey) { return; }
    // a key held down repeats: each repeat would answer (or undo, or skip) an item the
    // person has not seen (QA: holding 1 a second labelled some 30 items)
    if (e.repeat) { e.preventDefault(); return; }
    const k = e.key;
    if (k === "?") { toggleHelp(); e.preventDefault(); return; }
    if (k === "Escape") { toggleHelp(false); return; }
    // the help covers the item (the whole page in a narrow window): no key answers,
    // skips or undoes an item the person cannot see (QA: 1 answered the item behind it)
    if (!$("help").hidden) {
      if (/^[0-9]$/.test(k) || ["Backspace", "Enter", "u", "s", "a"].includes(k)) {
        say(HELP_COVERS, "error");
        e.preventDefault();
      }
      return;
    }
    if (busy && mode === "adjudicate") { return; }
    if (k === "Enter" && typed) { typedDone(); e.preventDefault(); return; }
    if (/^[0-9]$/.test(k)) { digit(k); e.preventDefault(); }
    else if (k === "Backspace" && picks.length) { picks.pop(); showPicks(true); e.preventDefault(); }
    else if (k === "u" && mode === "label") { undo(); }
    else if (k === "s" && mode === "label") { skip(); }
    else if (k === "a") { adjudicate(); }
  }

  // The page open in other tabs of this browser: the name is remembered, so each is the
  // same person, shown the same items (the server holds them per person). Each tab says
  // so, and a tab that goes gives back nothing while another tab of the person is open
  // (QA: nothing said it; an answer to an item answered in the other tab was refused;
  // closing either gave the other's items to everyone)
  const TAB = Math.random().toString(36).slice(2);
  const siblings = new Map();      // other tabs of this page: tab -> annotator
  let channel = null;
  function sameSiblings() {
    let n = 0;
    siblings.forEach((who) => { n += me !== null && who === me.annotator; });
    return n;
  }
  function showSiblings() {
    const n = sameSiblings();
    const t = $("tabs");
    t.hidden = !n;
    t.textContent = "";
    if (n) {
      t.append("this page is open in another tab of this browser as ", bdi(me.annotator),
               " (" + (n + 1) + " tabs): they show the same items, and an item answered " +
               "in one is refused in the other; label in one tab");
    }
  }
  function announce(kind) {
    if (channel && me) { channel.postMessage({ kind: kind, tab: TAB, annotator: me.annotator }); }
  }
  function openChannel() {
    if (typeof BroadcastChannel !== "function") { return; }
    channel = new BroadcastChannel("activetest-tabs:" + location.pathname);
    channel.onmessage = (e) => {
      const m = e.data || {};
      if (typeof m.tab !== "string" || m.tab === TAB) { return; }
      if (m.kind === "changed") { if (wake) { wake(); } return; }  // see askAgain
      if (m.kind === "bye") { siblings.delete(m.tab); }
      else { siblings.set(m.tab, m.annotator); }
      if (m.kind === "hello") { announce("here"); }
      showSiblings();
    };
    announce("hello");
  }

  // Another person at this browser signs in with their own name (it is remembered by
  // the browser: QA: there was no way to change it but clearing the browser's data, so
  // the next person's answers were stored under the first's name); not while this tab's
  // answers wait to be sent (each is sent under the name it was given with)
  function rename() {
    if (outbox.length) {
      say([outbox.length + " answer(s) of ", bdi(me.annotator), " are not saved yet: " +
           "change the name once they are"], "error");
      return;
    }
    try { localStorage.removeItem(NAME_KEY); } catch (e) { /* private mode */ }
    location.reload();  // the items held go back as the page goes (pagehide)
  }

  // The page says it is open (api/alive) every heartbeat_seconds while it is signed in:
  // a tab that crashed, or was closed without a word, stops saying so, and the server
  // gives its items back to the others after silent_seconds (QA: they came back only
  // when their claims lapsed, 10 min)
  let beating = null;
  function heartbeat() {
    if (beating !== null || typeof state.heartbeat_seconds !== "number") { return; }
    // with the items it shows and holds at hand: should the server have given them back
    // (the page was silent: a frozen tab, a computer asleep), those nobody took meanwhile
    // are claimed again, and the page says whether the one shown still is its own
    const beat = () => {
      const holding = mode === "label" ? (item ? [item.item_id] : []).concat(
        queue.map((x) => x.item_id)).slice(0, 10) : [];
      api("POST", "alive", { annotator: me.annotator, holding: holding }).then((r) => {
        if (!r || !r.released) { return; }
        const back = new Set(r.reclaimed || []);
        queue = queue.filter((x) => back.has(x.item_id));
        if (item && mode === "label" && !back.has(item.item_id)) {
          say(["this page was not heard from for a while, and item ", bdi(item.item_id),
               " went to another annotator meanwhile: your answer to it is stored only " +
               "if they have not answered it"], "error");
        }
      }).catch(() => {});
    };
    beat();
    beating = setInterval(beat, 1000 * Math.max(0.5, state.heartbeat_seconds));
  }

  async function start(name) {
    me = await api("POST", "hello", { annotator: name });
    try { localStorage.setItem(NAME_KEY, me.annotator); } catch (e) { /* private mode */ }
    $("name-form").hidden = true;
    // the name in a <bdi>: a right-to-left name keeps its digits and the words around it
    // in place
    const who = $("who");
    who.textContent = "annotator: ";
    who.append(el("bdi", me.annotator), me.adjudicator ? " (adjudicator)" : "");
    const rn = $("rename");
    rn.textContent = "not ";
    rn.append(el("bdi", me.annotator), "? change name");
    rn.hidden = false;
    rn.addEventListener("click", (e) => { e.currentTarget.blur(); rename(); });
    renderHelp();
    renderActions();
    openChannel();
    heartbeat();
    let kept = [];
    try { kept = JSON.parse(sessionStorage.getItem(OUTBOX_KEY) || "[]"); } catch (e) { kept = []; }
    // answers given before a reload and not confirmed: sent again (stored once); those
    // given for another session than the one served now, or under another name (another
    // tab signed in with it since: the name is the browser's), stay kept, not sent (QA:
    // another name's were dropped from the tab)
    const mine = (x) => !x.session || x.session === state.session_id;
    kept = kept.filter((x) => x && typeof x.annotator === "string");
    outbox = kept.filter((x) => x.annotator === me.annotator && mine(x));
    parked = kept.filter((x) => !outbox.includes(x));
    keepOutbox();
    const elsewhere = parked.filter((x) => !mine(x)).length;
    const names = Array.from(new Set(parked.filter((x) => mine(x)).map((x) => x.annotator)));
    if (parked.length) {
      showUnsent(true);
      const why = [];
      // names each in a <bdi> (see say)
      const each = (sep) => names.flatMap((x, i) => (i ? [sep, bdi(x)] : [bdi(x)]));
      if (elsewhere) {
        why.push(elsewhere + " answer(s) given in this tab for another session are kept " +
          "here, not sent: this address serves " + state.session + " now; serve their " +
          "session at this address and reload this page to send them");
      }
      if (names.length) {
        if (why.length) { why.push("; "); }
        why.push(parked.length - elsewhere + " answer(s) given in this tab as ",
          ...each(", "), " are kept here, not sent as ", bdi(me.annotator),
          "'s: sign in as ", ...each(" or "), " in this tab to send them");
      }
      say(why, "error");
    }
    later(flush);
    // skips made before the reload and not taken: sent again (those of another name or
    // session are let go: a skip holds no answer, the item only comes back unskipped)
    let keptSkips = [];
    try { keptSkips = JSON.parse(sessionStorage.getItem(SKIPS_KEY) || "[]"); } catch (e) { keptSkips = []; }
    skips = keptSkips.filter((x) => x && typeof x.item_id === "string" &&
                                    x.annotator === me.annotator && mine(x));
    keepSkips();
    skips.forEach((x) => sendSkip(x, false));
    let lostUndo = null;
    try { lostUndo = JSON.parse(sessionStorage.getItem(UNDO_KEY) || "null"); } catch (e) { lostUndo = null; }
    if (lostUndo && typeof lostUndo.item_id === "string") {
      keepUndo();  // (said once)
      const text = () => ["the undo pressed before the reload (of item ",
        bdi(lostUndo.item_id), ") was not done; press u to undo your last answer once the " +
        "answers above are saved"];
      say(text(), "error");
      later(async () => say(text(), "error"));  // the last word after the answers are sent
    }
    await next();
  }

  async function main() {
    try {
      state = await api("GET", "state");
    } catch (e) { say(e.message, "error"); return; }
    $("title").textContent = "activetest \u00b7 " + state.task + " \u00b7 " + state.session +
      " \u00b7 " + state.layout + (state.guess_shown ? "" : " \u00b7 blind");
    renderChoices();
    renderHelp();  // (the help button works before the name is given; again once it is)
    document.addEventListener("keydown", onKey);
    // the help without a keyboard (QA: on a touch screen only "?" opened it, and nothing
    // closed it once open)
    $("help-button").addEventListener("click", (e) => { e.currentTarget.blur(); toggleHelp(); });
    $("help-close").addEventListener("click", (e) => { e.currentTarget.blur(); toggleHelp(false); });
    // answers not confirmed live in this tab only: closing it loses them, so the browser
    // asks first (QA: a tab closed while the server was down lost them without a word)
    window.addEventListener("beforeunload", (e) => {
      if (outbox.length || parked.length) { e.preventDefault(); e.returnValue = ""; }
    });
    // the items held for this page go back at once when it goes (QA: closing the tab
    // kept them from the others until their claims lapsed, 10 min by default); a reload
    // asks for its items again
    window.addEventListener("pagehide", () => {
      if (!me) { return; }
      const others = sameSiblings();
      announce("bye");
      if (others) { return; }  // another tab of this person shows the items
      try {
        fetch("api/release", { method: "POST", keepalive: true, cache: "no-store",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ annotator: me.annotator, session_id: state.session_id }) })
          .catch(() => {});
      } catch (e) { /* the page is going anyway */ }
    });
    // back from the browser's cache (Back): the other tabs hear of it again
    window.addEventListener("pageshow", (e) => {
      if (e.persisted) { siblings.clear(); showSiblings(); announce("hello"); }
    });
    let saved = null;
    try { saved = localStorage.getItem(NAME_KEY); } catch (e) { saved = null; }
    if (saved) {
      try { await start(saved); return; } catch (e) { say(e.message, "error"); }
    }
    const form = $("name-form");
    form.hidden = false;
    setState("name");
    $("name").focus();
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      start($("name").value).catch((err) => say(err.message, "error"));
    });
  }

  main();
})();
