// The browser half of the annotation widget (shopbench.annotate.widget).
// It draws what Python sends (traits `content`, `ui`, `instructions`) and reports keys and clicks
// with model.send(); Python decides what happens. Keys are caught by one window-level keydown
// listener (capture phase), so they work in Voila and in JupyterLab without focusing the widget.

const CONFIDENCE = [
  { value: 0, key: "1", label: "0", hint: "a guess" },
  { value: 50, key: "2", label: "50", hint: "leaning one way" },
  { value: 100, key: "3", label: "100", hint: "certain" },
];
const PAIR_KEYS = new Set(["ArrowLeft", "ArrowRight", "1", "2", "3", "Enter", "Backspace"]);
const MODIFIER_KEYS = new Set(["Shift", "Control", "Alt", "Meta", "Tab", "CapsLock", "Escape"]);

// the views on this page, most recent last: only the most recent visible one takes keys
const VIEWS = (globalThis.__shopbenchAnnotateViews ??= []);

function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") el.className = v;
    else if (k === "html") el.innerHTML = v;
    else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
  }
  return el;
}

function typingInto(target) {
  if (!target || !(target instanceof Element)) return false;
  const tag = target.tagName;
  return tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT" || target.isContentEditable;
}

function render({ model, el }) {
  const uid = Math.random().toString(36).slice(2, 9);
  const root = h("div", { class: "sb-ann", "data-testid": "annotate-root" });
  el.appendChild(root);
  let active = true; // in JupyterLab: false after a click elsewhere on the page, true after one inside
  let drawnContent = null;
  let drawnScreen = null;

  const ui = () => model.get("ui") || {};
  const send = (msg) => model.send({ ...msg, view_id: ui().view_id });

  // ---- pair screen ------------------------------------------------------------------------------
  function slotCard(slot, html, noun) {
    const side = slot === "A" ? "left" : "right";
    const card = h("div", { class: `sb-slot sb-slot-${slot}`, "data-slot": slot },
      h("div", { class: "sb-slot-head" },
        h("span", { class: "sb-slot-name" }, `${noun[0].toUpperCase()}${noun.slice(1)} ${slot}`),
        h("span", { class: "sb-slot-hint" }, `click or ${slot === "A" ? "←" : "→"} to pick the ${side} side`)),
      h("div", { class: "sb-slot-body", html }));
    card.addEventListener("click", (e) => {
      // opening a tool result or selecting text is not a pick
      if (e.target.closest("details, summary, a")) return;
      if (String(window.getSelection?.() || "").length > 0) return;
      send({ type: "pick", slot });
    });
    return card;
  }

  function drawPair() {
    const c = model.get("content") || {};
    const refs = (c.references || []).map((r) =>
      h("details", { class: "sb-ref", name: `sb-refs-${uid}` },
        h("summary", {}, r.title), h("div", { class: "sb-ref-body", html: r.html })));
    for (const d of refs) {
      d.addEventListener("toggle", () => {
        if (d.open) for (const o of refs) if (o !== d) o.open = false; // one at a time
      });
    }
    const confidence = CONFIDENCE.map((c) =>
      h("button", { class: "sb-conf", type: "button", "data-value": String(c.value),
        onclick: () => send({ type: "confidence", value: c.value }) },
        h("kbd", {}, c.key), ` ${c.label} `, h("span", { class: "sb-muted" }, `(${c.hint})`)));
    root.replaceChildren(
      h("header", { class: "sb-header" },
        h("div", { class: "sb-header-top" },
          h("div", { class: "sb-criterion" },
            h("span", { class: "sb-criterion-name" }),
            h("span", { class: "sb-question" }, ` — ${c.question || ""}`)),
          h("div", { class: "sb-header-right" },
            h("span", { class: "sb-progress", "data-testid": "progress" }),
            h("button", { class: "sb-link", type: "button", onclick: () => send({ type: "instructions" }) },
              "Instructions"))),
        h("div", { class: "sb-criterion-desc" }),
        refs.length ? h("div", { class: "sb-refs" },
          h("span", { class: "sb-refs-label" }, "Additional documents to help you decide:"), refs) : null),
      ...(c.shared ? [h("div", { class: "sb-shared", "data-testid": "shared-context", html: c.shared })] : []),
      h("div", { class: "sb-sides" }, slotCard("A", c.left || "", c.noun || "item"),
        slotCard("B", c.right || "", c.noun || "item")),
      h("footer", { class: "sb-footer" },
        h("div", { class: "sb-confs" }, h("span", { class: "sb-muted" }, "Confidence:"), confidence),
        h("div", { class: "sb-nav" },
          h("button", { class: "sb-back", type: "button", onclick: () => send({ type: "back" }) },
            h("kbd", {}, "⌫"), " Back"),
          h("button", { class: "sb-next", type: "button", onclick: () => send({ type: "next" }) },
            "Next ", h("kbd", {}, "Enter"))),
        h("div", { class: "sb-message", role: "status" })));
    drawnContent = c;
  }

  function updatePair() {
    const u = ui();
    const crit = u.criterion || {};
    root.querySelector(".sb-criterion-name").textContent = crit.name || "";
    root.querySelector(".sb-criterion-desc").textContent = crit.description || "";
    const p = u.progress || {};
    root.querySelector(".sb-progress").textContent = `${p.index} / ${p.total}`;
    root.querySelector(".sb-progress").title = `${p.answered} of ${p.total} answered`;
    for (const card of root.querySelectorAll(".sb-slot")) {
      card.classList.toggle("sb-picked", card.dataset.slot === u.choice);
    }
    for (const b of root.querySelectorAll(".sb-conf")) {
      b.classList.toggle("sb-on", Number(b.dataset.value) === u.confidence);
    }
    root.querySelector(".sb-next").classList.toggle("sb-ready", u.choice != null && u.confidence != null);
    root.querySelector(".sb-message").textContent = u.message || (u.answered ? "Answered before: Enter keeps or saves the change." : "");
    root.dataset.viewId = String(u.view_id);
    root.dataset.pairIndex = String(p.index);
    root.dataset.choice = u.choice || "";
    root.dataset.confidence = u.confidence == null ? "" : String(u.confidence);
  }

  // ---- other screens ----------------------------------------------------------------------------
  function drawInstructions() {
    const u = ui();
    root.replaceChildren(h("div", { class: "sb-card sb-instructions" },
      h("div", { class: "sb-instructions-body", html: model.get("instructions") || "" }),
      h("button", { class: "sb-start sb-primary", type: "button", onclick: () => send({ type: "start" }) },
        u.reviewing_instructions ? "Back to annotating" : "Start annotating", " ", h("kbd", {}, "Enter"))));
  }

  function drawIntro() {
    const u = ui();
    const crit = u.criterion || {};
    const p = u.progress || {};
    const card = h("div", { class: "sb-card sb-intro" },
      h("div", { class: "sb-muted" }, "You are now judging"),
      h("h2", { class: "sb-intro-name" }, crit.name || ""),
      h("p", { class: "sb-intro-desc" }, crit.description || ""),
      h("p", { class: "sb-muted" }, `Pair ${p.index} of ${p.total} · ${p.answered} answered`),
      h("p", { class: "sb-intro-go" }, "Press any key or click to begin this section"));
    card.addEventListener("click", () => send({ type: "begin" }));
    root.replaceChildren(card);
  }

  function drawDone() {
    const p = ui().progress || {};
    root.replaceChildren(h("div", { class: "sb-card sb-done" },
      h("h2", {}, "All done — thank you!"),
      h("p", {}, `${p.answered} of ${p.total} pairs answered. Your answers are saved.`),
      h("p", { class: "sb-muted" }, "Backspace goes back to revise the last pair."),
      h("button", { class: "sb-back", type: "button", onclick: () => send({ type: "back" }) },
        h("kbd", {}, "⌫"), " Back")));
  }

  function draw() {
    const u = ui();
    const screen = u.screen || "instructions";
    if (screen === "pair") {
      if (drawnScreen !== "pair" || drawnContent !== model.get("content")) drawPair();
      updatePair();
    } else if (screen === "instructions") {
      drawInstructions();
      drawnContent = null;
    } else if (screen === "intro") {
      drawIntro();
      drawnContent = null;
    } else {
      drawDone();
      drawnContent = null;
    }
    if (screen === "pair" && drawnScreen !== "pair") root.scrollIntoView?.({ block: "start" });
    drawnScreen = screen;
    root.dataset.screen = screen;
    root.dataset.viewId = String(u.view_id);
  }

  // ---- keys -------------------------------------------------------------------------------------
  const view = { root };
  VIEWS.push(view);

  function takesKeys() {
    for (let i = VIEWS.length - 1; i >= 0; i--) {
      const v = VIEWS[i];
      if (v.root.isConnected && v.root.getClientRects().length > 0) return v === view;
    }
    return false;
  }

  function onKey(e) {
    if (!active || e.ctrlKey || e.metaKey || e.altKey || typingInto(e.target) || !takesKeys()) return;
    const screen = ui().screen;
    let wanted;
    if (screen === "pair") wanted = PAIR_KEYS.has(e.key);
    else if (screen === "intro") wanted = !MODIFIER_KEYS.has(e.key);
    else if (screen === "instructions") wanted = e.key === "Enter";
    else wanted = e.key === "Backspace";
    if (!wanted) return;
    e.preventDefault();
    e.stopImmediatePropagation();
    if (e.repeat && (e.key === "Enter" || e.key === "Backspace")) return;
    send({ type: "key", key: e.key });
  }

  function onPointer(e) {
    // only inside a notebook app (JupyterLab, Notebook 7) may a click elsewhere give keys back to it
    active = root.contains(e.target) || !document.querySelector(".jp-LabShell, .jp-NotebookShell");
  }

  window.addEventListener("keydown", onKey, true);
  document.addEventListener("pointerdown", onPointer, true);
  model.on("change:ui", draw);
  model.on("change:content", draw);
  model.on("change:instructions", draw);
  draw();

  return () => {
    window.removeEventListener("keydown", onKey, true);
    document.removeEventListener("pointerdown", onPointer, true);
    model.off("change:ui", draw);
    model.off("change:content", draw);
    model.off("change:instructions", draw);
    const i = VIEWS.indexOf(view);
    if (i >= 0) VIEWS.splice(i, 1);
  };
}

export default { render };
