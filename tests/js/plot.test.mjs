// The budget plot's front end (widgets/plot.js) on a fake model, DOM and plotly: plotly.js
// comes from the kernel as a custom message (not from the widget state), arrays arrive as
// typed buffers, two trait changes draw once, a click on a point goes to Python, and the
// teardown purges the plot and stops observing.
import assert from "node:assert/strict";
import { test } from "node:test";

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

// A script appended to the page "loads": what the kernel's plotly.js would define.
const scripts = [];
const append = document.head.appendChild.bind(document.head);
document.head.appendChild = (node) => {
  append(node);
  if (node.tagName === "SCRIPT") {
    scripts.push(node.src);
    globalThis.Plotly = fakePlotly;
    queueMicrotask(() => node.onload());
  }
  return node;
};

const { default: widget } = await import("../../widgets/plot.js");

function int32(values) {
  const array = new Int32Array(values);
  return { dtype: "int32", buffer: new DataView(array.buffer) };
}

function newModel() {
  return new FakeModel({
    plotly_js_version: "2.35.2",
    data: [{ name: "conversation", x: int32([0, 1, 2]), y: int32([10, 20, 30]) }],
    figure_layout: { title: { text: "tokens" } },
  });
}

test("plotly.js is asked of the kernel and loaded from its message, not from a CDN", async () => {
  const model = newModel();
  const el = document.createElement("div");
  const rendering = widget.render({ model, el });
  assert.deepEqual(model.sent, [{ type: "need-plotly" }]);
  const source = new TextEncoder().encode("/* plotly.min.js */");
  model.emit("msg:custom", { type: "plotly-js" }, [source.buffer]);
  const teardown = await rendering;
  assert.equal(scripts.length, 1);
  assert.ok(scripts[0].startsWith("blob:"), scripts[0]);
  assert.equal(model.handlers["msg:custom"].length, 0); // the loader stopped listening
  teardown();
});

test("arrays arrive as typed arrays; the layout keeps autosize; a click goes to Python", async () => {
  calls.length = 0;
  const model = newModel();
  const el = document.createElement("div");
  const teardown = await widget.render({ model, el });
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
  calls.length = 0;
  const model = newModel();
  const teardown = await widget.render({ model, el: document.createElement("div") });
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
  calls.length = 0;
  const model = newModel();
  const el = document.createElement("div");
  const teardown = await widget.render({ model, el });
  const observer = observers.at(-1);
  assert.deepEqual(observer.observed, [el]);
  teardown();
  assert.ok(observer.disconnected);
  assert.equal(calls.at(-1).what, "purge");
  assert.equal(model.handlerCount(), 0);
});
