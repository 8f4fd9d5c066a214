// The context map's front end (widgets/context_map.js) on a fake model and DOM: segments sized
// by tokens and coloured from Python's trait, ghosts marked, ids and sources inert, one
// delegated click that selects and opens, and a teardown that leaves nothing listening.
import assert from "node:assert/strict";
import { beforeEach, test } from "node:test";

import { FakeModel, PAYLOAD, installDocument, tagsBelow } from "./fake.mjs";

installDocument();
const { default: widget } = await import("../../widgets/context_map.js");

let model;
let el;
let teardown;

beforeEach(() => {
  model = new FakeModel({
    colors: { system: "#111111", conversation: "#222222" },
    segments: [
      { id: "system/0", placement: "system", tokens: 100 },
      { id: PAYLOAD, placement: "conversation", tokens: 300, source: PAYLOAD },
      { id: "msg/old", placement: "conversation", tokens: 100, ghost: "summarized" },
    ],
    selected: "",
    marks: { trigger: 450 },
    scale: 500,
  });
  // In an output area, as in JupyterLab: the view marks it live (the snapshot hides).
  const area = document.createElement("div");
  area.className = "jp-OutputArea";
  el = document.createElement("div");
  area.append(el);
  teardown = widget.render({ model, el });
});

test("the output area is marked live and one style rule hides the static snapshot", () => {
  assert.ok(el.parentNode.classList.contains("ctxlab-live"));
  const style = document.getElementById("ctxlab-live-style");
  assert.equal(style.textContent, ".ctxlab-live .ctxlab-static { display: none; }");
});

const segments = () => el.querySelectorAll(".ctxlab-seg").filter((s) => s.dataset.id !== undefined);

test("segments are sized by tokens over the scale and coloured from the colors trait", () => {
  const [system, payload, ghost] = segments();
  assert.equal(system.style.width, "20%");
  assert.equal(payload.style.width, "60%");
  assert.equal(system.style.background, "#111111");
  assert.equal(payload.style.background, "#222222");
  assert.ok(ghost.classList.contains("ghost"));
  assert.match(ghost.title, /\(summarized\)$/);
  // The legend names the colours Python sent, in its order.
  const keys = el.querySelectorAll(".ctxlab-map-key").map((k) => k.textContent);
  assert.deepEqual(keys.slice(0, 2), ["system", "conversation"]);
  const mark = el.querySelectorAll(".ctxlab-mark")[0];
  assert.equal(mark.style.left, "90%");
  assert.equal(mark.children[0].className, "left"); // near the right end: label to the left
});

test("an id or source with markup stays text", () => {
  const payload = segments()[1];
  assert.equal(payload.dataset.id, PAYLOAD);
  assert.ok(payload.title.includes(`source ${PAYLOAD}`));
  model.update("current", { ...model.get("segments")[1], segment: 1 });
  assert.ok(el.querySelectorAll(".ctxlab-map-info")[0].textContent.startsWith(PAYLOAD));
  assert.deepEqual([...tagsBelow(el)].sort(), ["div", "i", "span"]);
  assert.equal(globalThis.pwned, undefined);
});

test("a click selects the segment and asks Python to open it, again when selected", () => {
  segments()[0].dispatch("click");
  assert.equal(model.get("selected"), "system/0");
  assert.deepEqual(model.sent, [{ type: "open", id: "system/0" }]);
  assert.ok(segments()[0].classList.contains("selected"));
  segments()[0].dispatch("click");
  assert.equal(model.sent.length, 2);
  segments()[2].dispatch("mouseover");
  assert.equal(el.querySelectorAll(".ctxlab-map-info")[0].textContent, segments()[2].title);
});

test("a segment of several narrow items says their span; the one holding the selection is outlined", () => {
  model.update("segments", [
    { id: "system/0", placement: "system", tokens: 100 },
    { id: "msg/1", last: "msg/40", count: 40, placement: "conversation", tokens: 400, width: 400 },
  ]);
  const [, run] = segments();
  assert.equal(run.style.width, "80%");
  assert.equal(run.title, "40 items, msg/1 … msg/40 · conversation · 400 tokens");
  assert.equal(el.querySelectorAll(".ctxlab-map-info")[0].textContent, "2 items");
  model.update("count", 41);
  // Python answers a selection inside the run with the item and the segment that draws it.
  model.update("selected", "msg/7");
  model.update("current", { id: "msg/7", placement: "conversation", tokens: 9, segment: 1 });
  assert.ok(run.classList.contains("selected") || segments()[1].classList.contains("selected"));
  assert.ok(!segments()[0].classList.contains("selected"));
  assert.equal(el.querySelectorAll(".ctxlab-map-info")[0].textContent, "msg/7 · conversation · 9 tokens");
  segments()[1].dispatch("click"); // a run opens its first item
  assert.deepEqual(model.sent.at(-1), { type: "open", id: "msg/1" });
});

test("a placement with words of its own is named by them in the legend and on hover", () => {
  teardown();
  model = new FakeModel({
    colors: { unrecorded: "#9d9da1", system: "#111111" },
    labels: { unrecorded: "not recorded" },
    segments: [
      {
        id: "unrecorded/claude-opus-4-6/0",
        placement: "unrecorded",
        tokens: 400,
        source: "not recorded: System prompt, tool schemas",
        revision: "inferred from the bill",
      },
    ],
    selected: "",
    marks: {},
    scale: 500,
  });
  el = document.createElement("div");
  teardown = widget.render({ model, el });
  const keys = el.querySelectorAll(".ctxlab-map-key").map((k) => k.textContent);
  assert.deepEqual(keys.slice(0, 2), ["not recorded", "system"]);
  const [unseen] = segments();
  assert.equal(unseen.style.background, "#9d9da1");
  assert.equal(unseen.style.width, "80%");
  assert.equal(
    unseen.title,
    "unrecorded/claude-opus-4-6/0 · not recorded · 400 tokens · source not recorded: System " +
      "prompt, tool schemas · revision inferred from the bill",
  );
});

test("teardown removes every model handler and DOM listener", () => {
  const strip = el.querySelectorAll(".ctxlab-map-strip")[0];
  assert.ok(strip.listenerCount() > 0 && model.handlerCount() > 0);
  teardown();
  assert.equal(model.handlerCount(), 0);
  assert.equal(strip.listenerCount(), 0);
});

test("a threshold past the scale is drawn at the strip's end, its label inside", () => {
  model.update("marks", { trigger: 450, "input limit": 700 });
  const [trigger, limit] = el.querySelectorAll(".ctxlab-mark");
  assert.equal(trigger.style.left, "90%");
  assert.equal(limit.style.left, "100%");
  assert.equal(limit.title, "input limit: 700 tokens");
  assert.equal(limit.children[0].textContent, "input limit 700");
  assert.equal(limit.children[0].className, "left");
});

test("a threshold that is not known is said unknown, with no line, never drawn at 0", () => {
  // A recording as recorded: its agent's usage notice and trigger are not in the file.
  model.update("marks", { "usage notice": null, trigger: null, "input limit": 400 });
  const [notice, trigger, limit] = el.querySelectorAll(".ctxlab-mark");
  for (const [mark, name] of [
    [notice, "usage notice"],
    [trigger, "trigger"],
  ]) {
    assert.equal(mark.className, "ctxlab-mark unknown");
    assert.equal(mark.children[0].textContent, `${name} unknown`);
    assert.equal(mark.title, `${name}: unknown`);
    assert.equal(mark.style.left, undefined); // not placed on the strip: no line at 0
  }
  assert.notEqual(notice.children[0].style.top, trigger.children[0].style.top);
  assert.equal(limit.style.left, "80%");
  assert.equal(limit.children[0].textContent, "input limit 400");
});
