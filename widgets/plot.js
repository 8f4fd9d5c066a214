// A plotly view that does not carry plotly.js in its widget state.
//
// plotly's own FigureWidget stores its 5 MB bundle in the widget's `_esm`, so every notebook
// saved with widget state carries it. Here the kernel sends plotly.js once per page as a custom
// message (never saved); without a kernel (a static viewer of saved widget state) the view falls
// back to plotly's CDN. The figure itself arrives as synced state, arrays as binary buffers.

const WAIT_FOR_KERNEL_MS = 4000;
let plotly = null; // one load per page, shared by every view

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
      resolve(window.Plotly);
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

function loadPlotly(model) {
  if (window.Plotly) return Promise.resolve(window.Plotly);
  if (plotly) return plotly;
  plotly = new Promise((resolve, reject) => {
    const fallback = setTimeout(() => {
      model.off("msg:custom", onMessage);
      injectScript(cdn(model)).then(resolve, reject);
    }, WAIT_FOR_KERNEL_MS);
    function onMessage(message, buffers) {
      if (!message || message.type !== "plotly-js") return;
      clearTimeout(fallback);
      model.off("msg:custom", onMessage);
      const blob = new Blob([buffers[0]], { type: "text/javascript" });
      // A front end whose content policy refuses blob: scripts (some webviews) may still allow
      // evaluating the same text; failing both, plotly's CDN.
      injectScript(URL.createObjectURL(blob))
        .catch(() => {
          const define = window.define;
          window.define = undefined;
          try {
            (0, eval)(new TextDecoder().decode(buffers[0]));
          } finally {
            window.define = define;
          }
          if (!window.Plotly) throw new Error("plotly.js did not evaluate");
          return window.Plotly;
        })
        .catch(() => injectScript(cdn(model)))
        .then(resolve, reject);
    }
    model.on("msg:custom", onMessage);
    model.send({ type: "need-plotly" });
  });
  return plotly;
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

async function render({ model, el }) {
  const div = document.createElement("div");
  div.className = "ctxlab-plot";
  div.style.width = "100%";
  el.appendChild(div);
  const Plotly = await loadPlotly(model);
  const draw = () => {
    const layout = { ...revive(model.get("figure_layout")), autosize: true };
    Plotly.react(div, revive(model.get("data")), layout, { responsive: true, displaylogo: false });
  };
  draw();
  // One state message can change both traits: draw once, after both.
  let pending = false;
  const schedule = () => {
    if (pending) return;
    pending = true;
    queueMicrotask(() => {
      pending = false;
      draw();
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

export default { render };
