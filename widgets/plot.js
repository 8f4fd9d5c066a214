// A plotly view that does not carry plotly.js in its widget state.
//
// plotly's own FigureWidget stores its 5 MB bundle in the widget's `_esm`, so every notebook
// saved with widget state carries it. Here the kernel sends plotly.js (its 1.2 MB basic bundle)
// once per page as a custom message (never saved); when the kernel does not answer in time
// (busy, or a static viewer of saved widget state) the view says so and tries plotly's CDN too.
// The figure itself arrives as synced state, arrays as binary buffers.

// The kernel answers "need-plotly" only once the cell it is running ends: a next cell that keeps
// it busy delays plotly.js by as long. Past this wait the view says so and tries plotly's CDN
// too; whichever arrives first draws (a saved notebook's state has no kernel: the CDN only).
const CDN_AFTER_MS = 4000;
const loader = {
  plotly: null, // the page's plotly.js, once loaded (one load per page, shared by every view)
  // The open views waiting for it. A view that closes leaves this set: nothing of it stays on
  // the page (plotly.js may never come), and it never draws.
  waiting: new Set(),
  asker: null, // the waiting view that last asked its kernel, and when
  askedAt: 0,
  cdnTried: false,
  status: "", // what a view waiting for it shows
  listeners: new Set(),
  receiving: null, // the kernel's plotly.js being loaded (one load, however many copies came)
};

function setStatus(text) {
  loader.status = text;
  for (const listener of loader.listeners) listener(text);
}

function injectScript(source) {
  return new Promise((resolve, reject) => {
    // plotly.min.js is UMD: with an AMD loader on the page it would register a module instead
    // of setting window.Plotly, so hide `define` while it runs.
    const define = window.define;
    window.define = undefined;
    const script = document.createElement("script");
    script.src = source;
    script.onload = () => {
      window.define = define;
      if (window.Plotly) resolve(window.Plotly);
      else reject(new Error("plotly.js loaded but defined no Plotly"));
    };
    script.onerror = () => {
      window.define = define;
      reject(new Error("plotly.js did not load"));
    };
    document.head.appendChild(script);
  });
}

function cdn(model) {
  return `https://cdn.plot.ly/plotly-${model.get("plotly_js_version")}.min.js`;
}

// The kernel's plotly.js, as a blob: script; a front end whose content policy refuses blob:
// scripts (some webviews) may still allow evaluating the same text.
function fromKernel(buffer) {
  const blob = new Blob([buffer], { type: "text/javascript" });
  return injectScript(URL.createObjectURL(blob)).catch(() => {
    const define = window.define;
    window.define = undefined;
    try {
      (0, eval)(new TextDecoder().decode(buffer));
    } finally {
      window.define = define;
    }
    if (!window.Plotly) throw new Error("plotly.js did not evaluate");
    return window.Plotly;
  });
}

// A small figure of the kinds a Lab's plot has (stacked areas, lines, markers, a shape, a
// second y axis, unified hover), drawn off the page and purged: plotly.js's first draw compiles
// its drawing code, and that is paid here, while the kernel still reads the recording, instead
// of in the first plot (its draw at 5,000 requests 958 → 787 ms, median of 10 fresh pages at
// load 15, benchmarks/plotly_bundle_bench.py: noisy, see docs/changelog.md). A detached
// element: nothing of it reaches the page.
const WARM_UP = {
  data: [
    { type: "scatter", mode: "lines", x: [0, 1, 2], y: [1, 3, 2], stackgroup: "a" },
    { type: "scatter", mode: "lines", x: [0, 1, 2], y: [2, 1, 2], stackgroup: "a" },
    { type: "scatter", mode: "lines+markers", x: [0, 1, 2], y: [3, 4, 4] },
    { type: "scatter", mode: "markers", x: [1], y: [2], yaxis: "y2" },
  ],
  layout: {
    hovermode: "x unified",
    shapes: [{ type: "line", x0: 1, x1: 1, y0: 0, y1: 1, yref: "paper" }],
    yaxis2: { overlaying: "y", visible: false },
  },
};

// Returns when the small figure is drawn and purged (`benchmarks/plotly_bundle_bench.py` waits).
export function warmUp(Plotly) {
  const div = document.createElement("div");
  try {
    return Promise.resolve(Plotly.react(div, WARM_UP.data, WARM_UP.layout))
      .catch(() => {})
      .finally(() => Plotly.purge(div));
  } catch {
    // Only a head start: a plotly.js that cannot draw here says so in the real plot.
    return Promise.resolve();
  }
}

function loaded(Plotly) {
  if (loader.plotly) return;
  loader.plotly = Plotly;
  loader.asker = null;
  setStatus("");
  const waiting = [...loader.waiting];
  // Sent ahead, before any plot: warm it up meanwhile (a plot waiting draws at once instead).
  if (!waiting.length) warmUp(Plotly);
  for (const waiter of waiting) stopWaiting(waiter);
  // Each view draws on its own: one that throws does not leave the others blank.
  for (const waiter of waiting) queueMicrotask(() => waiter.onReady?.(Plotly));
}

// The kernel's plotly.js arrived (asked for, or sent ahead: see `initialize`): loaded once.
// The kernel's is plotly's basic bundle (scatter, bar, pie): a page that has a plotly.js
// already (plotly's own renderer loaded the full one) keeps it and draws with it — loading
// ours over it would take window.Plotly's other trace types from that renderer's figures.
function receive(model, buffer) {
  if (!loader.plotly && window.Plotly) return loaded(window.Plotly);
  if (loader.plotly || loader.receiving) return;
  loader.receiving = fromKernel(buffer).then(loaded, () => {
    loader.receiving = null;
    tryCdn(model);
  });
}

function tryCdn(model) {
  if (loader.cdnTried || loader.plotly) return;
  loader.cdnTried = true;
  injectScript(cdn(model)).then(loaded, () => {
    if (!loader.plotly) {
      setStatus(
        "The plot draws when the kernel sends plotly.js: it has not answered yet (it is busy " +
          "running a cell, or not running), and plotly's CDN cannot be reached from this page.",
      );
    }
  });
}

function ask(waiter) {
  loader.asker = waiter;
  loader.askedAt = Date.now();
  waiter.model.send({ type: "need-plotly" });
}

function stopWaiting(waiter) {
  clearTimeout(waiter.timer);
  waiter.model.off("msg:custom", waiter.onMessage);
  loader.waiting.delete(waiter);
}

// plotly.js for the view of `model`, handed to `onReady` (in a microtask) once the page has it:
// asked of its kernel (each view listens on its own model). Returns the view's `close`: after
// it `onReady` is never called and the page keeps nothing of the view. When the view that
// asked closes before the answer (nothing listens for it there any more), a view still waiting
// asks its own kernel at once.
function loadPlotly(model, onReady) {
  if (!loader.plotly && window.Plotly) loader.plotly = window.Plotly;
  const waiter = { model, onReady, timer: null, onMessage: null };
  const close = () => {
    waiter.onReady = null;
    stopWaiting(waiter);
    if (loader.asker !== waiter) return;
    loader.asker = null;
    const next = loader.waiting.values().next().value;
    if (next && !loader.plotly) ask(next);
  };
  if (loader.plotly) {
    queueMicrotask(() => waiter.onReady?.(loader.plotly));
    return close;
  }
  waiter.onMessage = (message, buffers) => {
    if (message && message.type === "plotly-js") receive(model, buffers[0]);
  };
  model.on("msg:custom", waiter.onMessage);
  loader.waiting.add(waiter);
  // One ask per page, unless the last went unanswered past the wait (its kernel may be gone);
  // none while the copy the kernel sent ahead is loading.
  const stale = !loader.askedAt || Date.now() - loader.askedAt >= CDN_AFTER_MS;
  if (stale && !loader.receiving) ask(waiter);
  waiter.timer = setTimeout(() => {
    if (loader.plotly || loader.receiving) return; // a copy loading: it says if it fails
    setStatus(
      "The plot draws when the kernel sends plotly.js: it has not answered yet (it is busy " +
        "running a cell, or not running). Trying plotly's CDN meanwhile…",
    );
    tryCdn(model);
  }, CDN_AFTER_MS);
  return close;
}

const TYPED = {
  int32: Int32Array,
  float64: Float64Array,
  float32: Float32Array,
  uint8: Uint8Array,
  int8: Int8Array,
  int16: Int16Array,
  uint16: Uint16Array,
  uint32: Uint32Array,
};

// Arrays come as {dtype, buffer: DataView}; plotly.js takes typed arrays as they are.
function revive(value) {
  if (Array.isArray(value)) return value.map(revive);
  if (value && typeof value === "object") {
    if (value.buffer instanceof DataView && value.dtype in TYPED) {
      const view = value.buffer;
      const Typed = TYPED[value.dtype];
      const copy = view.buffer.slice(view.byteOffset, view.byteOffset + view.byteLength);
      return new Typed(copy);
    }
    const out = {};
    for (const [key, item] of Object.entries(value)) out[key] = revive(item);
    return out;
  }
  return value;
}

// The view returns at once: plotly.js may come only when the kernel is free (see `loadPlotly`),
// and until then the view says why nothing is drawn.
function render({ model, el }) {
  const div = document.createElement("div");
  div.className = "ctxlab-plot";
  div.style.width = "100%";
  const status = document.createElement("div");
  status.className = "ctxlab-plot-status";
  status.style.cssText = "font-size:12px;color:#555;padding:4px 0";
  el.appendChild(status);
  el.appendChild(div);
  const show = (text) => {
    status.textContent = text;
    status.style.display = text ? "" : "none";
  };
  loader.listeners.add(show);
  show(loader.status);
  let teardown = () => {};
  const close = loadPlotly(model, (Plotly) => {
    loader.listeners.delete(show);
    show("");
    teardown = draw(Plotly, model, el, div);
  });
  return () => {
    close();
    loader.listeners.delete(show);
    teardown();
  };
}

function draw(Plotly, model, el, div) {
  const redraw = () => {
    const layout = { ...revive(model.get("figure_layout")), autosize: true };
    Plotly.react(div, revive(model.get("data")), layout, { responsive: true, displaylogo: false });
  };
  redraw();
  // One state message can change both traits: draw once, after both.
  let pending = false;
  const schedule = () => {
    if (pending) return;
    pending = true;
    queueMicrotask(() => {
      pending = false;
      redraw();
    });
  };
  div.on("plotly_click", (event) => {
    const point = event && event.points && event.points[0];
    if (point) model.send({ type: "click", x: point.x, trace: point.data.name || "" });
  });
  model.on("change:data", schedule);
  model.on("change:figure_layout", schedule);
  // The view is often drawn before it is attached, at plotly's default 700 px; follow the
  // container's real width instead.
  const observer = new ResizeObserver(() => {
    if (div.offsetWidth > 0) Plotly.Plots.resize(div);
  });
  observer.observe(el);
  return () => {
    observer.disconnect();
    model.off("change:data", schedule);
    model.off("change:figure_layout", schedule);
    Plotly.purge(div);
  };
}

// Before any view: the kernel sends plotly.js unasked while it still runs the cell that made
// the plot (`PlotView.send_plotly_ahead`), so the page loads it meanwhile instead of asking
// once the cell has ended and loading it then. A copy that comes before this model listens is
// simply missed: the view asks, as without it.
function initialize({ model }) {
  const onMessage = (message, buffers) => {
    if (message && message.type === "plotly-js") receive(model, buffers[0]);
  };
  model.on("msg:custom", onMessage);
  return () => model.off("msg:custom", onMessage);
}

export default { initialize, render };
