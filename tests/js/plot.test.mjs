// The budget plot's front end (widgets/plot.js) on a fake model, DOM and plotly: plotly.js
// comes from the kernel as a custom message (not from the widget state), arrays arrive as
// typed buffers, two trait changes draw once, a click on a point goes to Python, and the
// teardown purges the plot and stops observing. A kernel busy past the wait (the next cell
// running) leaves the view saying why nothing is drawn, and it draws when the kernel answers.
// A view closed before plotly.js arrives never draws, keeps no handler and is not kept alive.
import assert from "node:assert/strict";
import { test } from "node:test";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

import { FakeModel, installDocument } from "./fake.mjs";

const document = installDocument();

const calls = [];
const fakePlotly = {
  react(div, data, layout, config) {
    calls.push({ what: "react", div, data, layout, config });
    div.handlers ||= {};
    div.on = (event, handler) => {
      div.handlers[event] = handler;
    };
    return Promise.resolve(div);
  },
  purge(div) {
    calls.push({ what: "purge", div });
  },
  Plots: { resize: (div) => calls.push({ what: "resize", div }) },
};

const observers = [];
globalThis.ResizeObserver = class {
  constructor(callback) {
    this.callback = callback;
    this.observed = [];
    this.disconnected = false;
    observers.push(this);
  }
  observe(el) {
    this.observed.push(el);
  }
  disconnect() {
    this.disconnected = true;
  }
};

// A script appended to the page "loads": what the kernel's plotly.js would define. The CDN
// loads only while `cdnReachable` (the tests' machine, like a user's, may be offline).
const scripts = [];
let cdnReachable = true;
let blobRefused = false; // a content policy that refuses blob: scripts (some webviews)
let slowScripts = false; // as a browser does: plotly.js defines Plotly when it has run, later
const append = document.head.appendChild.bind(document.head);
document.head.appendChild = (node) => {
  append(node);
  if (node.tagName === "SCRIPT") {
    scripts.push(node.src);
    if ((node.src.startsWith("https:") && !cdnReachable) || (node.src.startsWith("blob:") && blobRefused)) {
      queueMicrotask(() => node.onerror());
    } else if (typeof globalThis.define === "function" && globalThis.define.amd) {
      // plotly.min.js is UMD: with an AMD loader on the page it registers a module instead.
      globalThis.define("plotly", [], () => fakePlotly);
      queueMicrotask(() => node.onload());
    } else if (slowScripts) {
      queueMicrotask(() => {
        globalThis.Plotly = fakePlotly;
        node.onload();
      });
    } else {
      globalThis.Plotly = fakePlotly;
      queueMicrotask(() => node.onload());
    }
  }
  return node;
};

// Let the promises of a load and a draw run.
const settle = () => new Promise((resolve) => setImmediate(resolve));

// A full garbage collection, after the current job (a WeakRef read in it holds its target).
setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc");
async function collected() {
  for (let round = 0; round < 3; round += 1) {
    await settle();
    gc();
  }
}

const { default: widget } = await import("../../widgets/plot.js");

function int32(values) {
  const array = new Int32Array(values);
  return { dtype: "int32", buffer: new DataView(array.buffer) };
}

// The kernel's answer to a view's ask: plotly.js's `source`, as a custom message's buffer.
function sendPlotly(model, source = "/* plotly.min.js */") {
  model.emit("msg:custom", { type: "plotly-js" }, [new TextEncoder().encode(source).buffer]);
}

// A view of `view` (the widget module) on `model`, in an element of its own: `close` ends it.
function openView(view, model = newModel()) {
  const el = document.createElement("div");
  return { model, el, close: view.render({ model, el }) };
}

function newModel() {
  return new FakeModel({
    plotly_js_version: "2.35.2",
    data: [{ name: "conversation", x: int32([0, 1, 2]), y: int32([10, 20, 30]) }],
    figure_layout: { title: { text: "tokens" } },
  });
}

test("plotly.js is asked of the kernel and loaded from its message, not from a CDN", async () => {
  const { model, el, close: teardown } = openView(widget);
  assert.deepEqual(model.sent, [{ type: "need-plotly" }]);
  sendPlotly(model);
  await settle();
  assert.equal(scripts.length, 1);
  assert.ok(scripts[0].startsWith("blob:"), scripts[0]);
  assert.equal(model.handlers["msg:custom"].length, 0); // the loader stopped listening
  assert.equal(calls.at(-1).what, "react"); // drawn
  teardown();
});

// A view of `model` drawn on a fresh element, the calls to plotly before it forgotten.
async function drawnView(model = newModel()) {
  calls.length = 0;
  const view = openView(widget, model);
  await settle();
  return view;
}

test("arrays arrive as typed arrays; the layout keeps autosize; a click goes to Python", async () => {
  const { model, close: teardown } = await drawnView();
  const [first] = calls;
  assert.equal(first.what, "react");
  assert.ok(first.data[0].x instanceof Int32Array);
  assert.deepEqual([...first.data[0].y], [10, 20, 30]);
  assert.equal(first.layout.autosize, true);
  assert.equal(first.layout.title.text, "tokens");
  assert.equal(first.config.displaylogo, false);
  first.div.handlers.plotly_click({ points: [{ x: 2, data: { name: "conversation" } }] });
  assert.deepEqual(model.sent.at(-1), { type: "click", x: 2, trace: "conversation" });
  teardown();
});

test("data and layout changed together draw once", async () => {
  const { model, close: teardown } = await drawnView();
  model.update("data", [{ name: "conversation", x: int32([0]), y: int32([5]) }]);
  model.update("figure_layout", { title: { text: "again" } });
  await Promise.resolve();
  const draws = calls.filter((c) => c.what === "react");
  assert.equal(draws.length, 2); // the first draw, then one for both changes
  assert.equal(draws[1].layout.title.text, "again");
  assert.deepEqual([...draws[1].data[0].y], [5]);
  teardown();
});

test("teardown purges the plot, stops observing and leaves no model handler", async () => {
  const { model, el, close: teardown } = await drawnView();
  const observer = observers.at(-1);
  assert.deepEqual(observer.observed, [el]);
  teardown();
  assert.ok(observer.disconnected);
  assert.equal(calls.at(-1).what, "purge");
  assert.equal(model.handlerCount(), 0);
});

// A fresh copy of the module: a page where plotly.js was never loaded (nothing drawn yet).
async function freshWidget(tag) {
  delete globalThis.Plotly;
  calls.length = 0; // what another copy drew
  return (await import(`../../widgets/plot.js?${tag}`)).default;
}

function statusOf(el) {
  const status = el.querySelectorAll(".ctxlab-plot-status")[0];
  return status.style.display === "none" ? "" : status.textContent;
}

test("a kernel busy past the wait: the view says why, and draws when the kernel answers", async (t) => {
  t.mock.timers.enable({ apis: ["setTimeout", "Date"], now: 1_000_000 });
  t.after(() => {
    cdnReachable = true;
  });
  cdnReachable = false; // offline: plotly's CDN cannot help
  const fresh = await freshWidget("busy");
  scripts.length = 0;
  const { model, el, close: teardown } = openView(fresh);
  assert.deepEqual(model.sent, [{ type: "need-plotly" }]);
  assert.equal(statusOf(el), ""); // no word while the kernel may still answer at once
  t.mock.timers.tick(4000); // the next cell keeps the kernel busy
  await settle();
  assert.match(statusOf(el), /has not answered yet \(it is busy running a cell/);
  assert.match(statusOf(el), /CDN cannot be reached/);
  assert.ok(scripts.some((s) => s.startsWith("https://cdn.plot.ly/")), scripts);
  assert.equal(calls.filter((c) => c.what === "react").length, 0);
  // A second view on the page (another Lab) waits too, saying the same, without asking again.
  const { model: other, el: otherEl, close: otherTeardown } = openView(fresh);
  assert.deepEqual(other.sent, [{ type: "need-plotly" }]); // the first ask is past the wait
  assert.match(statusOf(otherEl), /has not answered yet/);
  // The cell ends: the kernel answers, and both views draw.
  sendPlotly(model);
  await settle();
  assert.equal(calls.filter((c) => c.what === "react").length, 2);
  assert.equal(statusOf(el), "");
  assert.equal(statusOf(otherEl), "");
  // The plot's own handlers (data, layout changes); none left by the loader.
  assert.deepEqual(Object.keys(model.handlers).filter((k) => model.handlers[k].length), [
    "change:data",
    "change:figure_layout",
  ]);
  teardown();
  otherTeardown();
  assert.equal(model.handlerCount(), 0);
  assert.equal(other.handlerCount(), 0);
});

test("plotly.js sent ahead by the busy kernel loads once; a view meanwhile neither asks nor loads it again", async (t) => {
  t.after(() => {
    slowScripts = false;
  });
  slowScripts = true;
  const fresh = await freshWidget("ahead");
  scripts.length = 0;
  const model = newModel();
  const cleanup = fresh.initialize({ model }); // the model exists: no view yet
  sendPlotly(model); // the kernel, still busy
  assert.equal(scripts.length, 1);
  const teardown = fresh.render({ model, el: document.createElement("div") }); // the cell ended
  assert.deepEqual(model.sent, []); // not asked: the copy sent ahead is loading
  sendPlotly(model); // another copy: not loaded
  await settle();
  assert.equal(scripts.length, 1);
  assert.equal(calls.filter((c) => c.what === "react").length, 1); // drawn
  teardown();
  cleanup();
  assert.equal(model.handlerCount(), 0);
});

// The kernel sends plotly's basic bundle (scatter, bar, pie). A page whose window.Plotly came
// with plotly's own renderer (the full bundle) keeps it: the kernel's copy, sent ahead, is not
// loaded over it (that renderer's heatmaps would lose their trace type), and the view draws
// with the page's.
test("a page that has a plotly.js keeps it: the kernel's basic bundle is not loaded over it", async () => {
  const fresh = await freshWidget("page-has-plotly");
  scripts.length = 0;
  const pagePlotly = { ...fakePlotly, full: true };
  globalThis.Plotly = pagePlotly;
  const model = newModel();
  const cleanup = fresh.initialize({ model });
  sendPlotly(model); // sent ahead while the cell runs
  const teardown = fresh.render({ model, el: document.createElement("div") });
  await settle();
  assert.deepEqual(scripts, []); // nothing loaded
  assert.equal(globalThis.Plotly, pagePlotly);
  const drawn = calls.filter((c) => c.what === "react" && c.data[0].name === "conversation");
  assert.equal(drawn.length, 1); // drawn with the page's
  assert.deepEqual(model.sent, []);
  teardown();
  cleanup();
});

// plotly.js's first draw compiles its drawing code: a copy sent ahead (no plot yet) draws a
// small figure off the page meanwhile and purges it; a plot already waiting draws at once.
test("plotly.js sent ahead before any plot warms up off the page; a waiting plot draws at once", async () => {
  const fresh = await freshWidget("warm-up");
  const model = newModel();
  const cleanup = fresh.initialize({ model });
  sendPlotly(model);
  await settle();
  const [warm, purged, ...rest] = calls;
  assert.equal(warm.what, "react");
  assert.equal(warm.div.parentNode, null); // never on the page
  assert.deepEqual(
    warm.data.map((t) => t.mode),
    ["lines", "lines", "lines+markers", "markers"],
  );
  assert.deepEqual(purged, { what: "purge", div: warm.div });
  assert.deepEqual(rest, []);
  const teardown = fresh.render({ model, el: document.createElement("div") });
  await settle();
  assert.equal(calls.at(-1).data[0].name, "conversation");
  teardown();
  cleanup();
  // A plot waiting when plotly.js arrives: its draw is the only one.
  const again = await freshWidget("warm-up-waiting");
  const { model: waiting, close } = openView(again);
  sendPlotly(waiting);
  await settle();
  assert.deepEqual(
    calls.map((c) => [c.what, c.data?.[0].name]),
    [["react", "conversation"]],
  );
  close();
});

test("a view torn down before plotly.js arrives draws nothing and leaves no handler", async (t) => {
  t.mock.timers.enable({ apis: ["setTimeout"] });
  const fresh = await freshWidget("gone");
  const { model, close: teardown } = openView(fresh);
  teardown();
  assert.equal(model.handlerCount(), 0);
  t.mock.timers.tick(5000);
  await settle();
  assert.equal(calls.filter((c) => c.what === "react").length, 0);
});

test("an array reads its own bytes: from its DataView's offset, its length only", async () => {
  // The kernel's buffers often share one ArrayBuffer: this array starts 8 bytes in.
  const backing = new ArrayBuffer(32);
  new Int32Array(backing).set([111, 222, 7, 8, 9, 333, 444, 555]);
  const x = { dtype: "int32", buffer: new DataView(backing, 8, 12) };
  const y = { dtype: "float64", buffer: new DataView(new Float64Array([0.5, 1.5, 2.5, 9]).buffer, 8, 16) };
  const model = new FakeModel({
    plotly_js_version: "2.35.2",
    data: [{ name: "conversation", x, y }],
    figure_layout: {},
  });
  const { close: teardown } = await drawnView(model);
  const [drawn] = calls.filter((c) => c.what === "react");
  assert.deepEqual([...drawn.data[0].x], [7, 8, 9]);
  assert.deepEqual([...drawn.data[0].y], [1.5, 2.5]);
  teardown();
});

// A page with an AMD loader (as JupyterLab's may be) gets plotly.js `source` from the kernel:
// plotly.js registers no module with the loader (it sets window.Plotly) and draws, and the
// page's loader is back for the page's other scripts.
async function drawsBesideAnAmdLoader(t, tag, source) {
  const registered = [];
  const amd = (...args) => registered.push(args);
  amd.amd = {};
  globalThis.define = amd;
  t.after(() => {
    delete globalThis.define;
  });
  const fresh = await freshWidget(tag);
  const { model, close } = openView(fresh);
  sendPlotly(model, source);
  await settle();
  assert.deepEqual(registered, []);
  assert.equal(calls.filter((c) => c.what === "react").length, 1);
  assert.equal(globalThis.define, amd);
  close();
}

test("an AMD loader on the page is hidden while plotly.js loads, then put back", async (t) => {
  await drawsBesideAnAmdLoader(t, "amd");
});

test("an AMD loader is hidden while the kernel's plotly.js is evaluated, where blob: is refused", async (t) => {
  globalThis.fakePlotly = fakePlotly;
  blobRefused = true;
  t.after(() => {
    delete globalThis.fakePlotly;
    blobRefused = false;
  });
  // What plotly.min.js's UMD head does: register with an AMD loader when there is one.
  const umd =
    'if (typeof define === "function" && define.amd) define("plotly", [], () => fakePlotly);' +
    " else globalThis.Plotly = fakePlotly;";
  await drawsBesideAnAmdLoader(t, "amd-eval", umd);
});

// The page's views that draw: a react on `el`'s plot div.
function drewIn(el) {
  const [, div] = el.children;
  return calls.filter((c) => c.what === "react" && c.div === div).length;
}

test("a view closed while another brings plotly.js: the closed one draws nothing, keeps no handler", async (t) => {
  t.mock.timers.enable({ apis: ["setTimeout"] });
  const fresh = await freshWidget("closed-other");
  const { model: closed, el: closedEl, close } = openView(fresh);
  const { model: open, el: openEl, close: teardown } = openView(fresh);
  const watched = observers.length;
  close();
  // plotly.js arrives through the other view's kernel.
  sendPlotly(open);
  await settle();
  assert.equal(drewIn(openEl), 1);
  assert.equal(drewIn(closedEl), 0);
  assert.equal(closed.handlerCount(), 0); // no change:data / change:figure_layout left behind
  assert.deepEqual(
    observers.slice(watched).map((o) => o.observed[0]),
    [openEl], // the closed view's element is not observed
  );
  teardown();
  assert.equal(open.handlerCount(), 0);
});

test("a view closed while its own plotly.js is loading draws nothing and keeps no handler", async (t) => {
  t.mock.timers.enable({ apis: ["setTimeout"] });
  const fresh = await freshWidget("closed-own");
  const { model, el, close } = openView(fresh);
  // The kernel's answer is on its way (its script loading) when the cell's output is cleared.
  sendPlotly(model);
  close();
  await settle();
  assert.equal(drewIn(el), 0);
  assert.equal(model.handlerCount(), 0);
  // The page has plotly.js now: a view opened next draws at once ...
  const { model: next, el: nextEl, close: teardown } = openView(fresh);
  await settle();
  assert.equal(drewIn(nextEl), 1);
  teardown();
  // ... and one closed as soon as it is opened (before its draw's turn) never draws.
  const brief = newModel();
  const briefEl = document.createElement("div");
  fresh.render({ model: brief, el: briefEl })();
  await settle();
  assert.equal(drewIn(briefEl), 0);
  assert.equal(brief.handlerCount(), 0);
});

test("the view that asked the kernel closes before the answer: a view still waiting asks its own", async (t) => {
  t.mock.timers.enable({ apis: ["setTimeout", "Date"], now: 2_000_000 });
  const fresh = await freshWidget("asker-closed");
  const first = newModel();
  const close = fresh.render({ model: first, el: document.createElement("div") });
  t.mock.timers.tick(1000); // within the wait: the second view does not ask again
  const second = newModel();
  const el = document.createElement("div");
  const teardown = fresh.render({ model: second, el });
  assert.deepEqual(first.sent, [{ type: "need-plotly" }]);
  assert.deepEqual(second.sent, []);
  // The first view's output is cleared before its kernel answered: nothing listens there any
  // more, so the second view asks its own kernel at once (not after the wait, from the CDN).
  close();
  assert.deepEqual(second.sent, [{ type: "need-plotly" }]);
  sendPlotly(second);
  await settle();
  assert.equal(drewIn(el), 1);
  teardown();
});

test("a view closed before plotly.js arrives is not kept alive by the page waiting for it", async (t) => {
  t.mock.timers.enable({ apis: ["setTimeout"] });
  const fresh = await freshWidget("collected");
  // Another view keeps the page waiting (plotly.js never comes: a static viewer, offline).
  const waiting = fresh.render({ model: newModel(), el: document.createElement("div") });
  const refs = (() => {
    const model = newModel();
    const el = document.createElement("div");
    fresh.render({ model, el })();
    return [new WeakRef(model), new WeakRef(el)];
  })();
  await collected();
  assert.deepEqual(
    refs.map((ref) => ref.deref() === undefined),
    [true, true],
  );
  waiting();
});
