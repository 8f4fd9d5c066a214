// ctxlab context map: the selected request as one strip, one segment per item, sized by tokens
// and coloured by placement; ghosts for what was omitted, offloaded or summarized.
// Plain ES module for anywidget, no build step. Untrusted text (ids, sources) goes through
// textContent and the title attribute only, never innerHTML.

// The placement colours come from Python (the `colors` trait: `ctxlab.util._html.PLACEMENT_COLORS`,
// the one table every view uses).

// Where the widgets render, the Lab's static snapshot (its second output, for viewers without a
// kernel) is hidden: the output area is marked live and one style rule hides the snapshot.
function markLive(el, tries = 20) {
  const area = el.closest(".jp-OutputArea, .output_area, .output, .cell-output-container");
  if (!area) {
    if (tries > 0) setTimeout(() => markLive(el, tries - 1), 100); // not attached yet
    return;
  }
  area.classList.add("ctxlab-live");
  if (!document.getElementById("ctxlab-live-style")) {
    const style = document.createElement("style");
    style.id = "ctxlab-live-style";
    style.textContent = ".ctxlab-live .ctxlab-static { display: none; }";
    document.head.append(style);
  }
}

function render({ model, el }) {
  el.classList.add("ctxlab-map");
  markLive(el);
  const legend = document.createElement("div");
  legend.className = "ctxlab-map-legend";
  const strip = document.createElement("div");
  strip.className = "ctxlab-map-strip";
  const marks = document.createElement("div");
  marks.className = "ctxlab-map-marks";
  const info = document.createElement("div");
  info.className = "ctxlab-map-info";
  el.append(legend, strip, marks, info);

  const COLORS = model.get("colors") || {};
  // A placement's words where they differ from its name (unrecorded: "not recorded").
  const LABELS = model.get("labels") || {};
  const label = (placement) => LABELS[placement] || placement;
  for (const [name, color] of Object.entries(COLORS)) {
    const key = document.createElement("span");
    key.className = "ctxlab-map-key";
    const swatch = document.createElement("i");
    swatch.style.background = color;
    key.append(swatch, document.createTextNode(label(name)));
    legend.append(key);
  }
  // The faded, hatched segments: what this request no longer holds.
  const ghostKey = document.createElement("span");
  ghostKey.className = "ctxlab-map-key";
  const ghostSwatch = document.createElement("i");
  ghostSwatch.className = "ctxlab-seg ghost";
  ghostSwatch.style.background = "#999";
  ghostKey.append(ghostSwatch, document.createTextNode("removed (omitted, offloaded, summarized)"));
  legend.append(ghostKey);

  function describe(item) {
    // A segment of several items too narrow to draw apart (`map_segments`): their span.
    const what = item.count > 1 ? `${item.count} items, ${item.id} … ${item.last}` : item.id;
    const parts = [what, label(item.placement), `${item.tokens} tokens`];
    if (item.source) parts.push(`source ${item.source}`);
    if (item.revision) parts.push(`revision ${item.revision}`);
    if (item.ghost) parts.push(`(${item.ghost})`);
    return parts.join(" · ");
  }

  function draw() {
    const items = model.get("segments") || [];
    const selected = model.get("selected");
    const current = model.get("current") || {};
    const scale = Math.max(model.get("scale") || 1, 1);
    // One fragment: thousands of segments are appended in a single layout pass.
    const fragment = document.createDocumentFragment();
    for (const [index, item] of items.entries()) {
      const seg = document.createElement("div");
      const chosen = index === current.segment || (!(item.count > 1) && item.id === selected);
      seg.className = "ctxlab-seg" + (item.ghost ? " ghost" : "") + (chosen ? " selected" : "");
      seg.style.width = `${(100 * (item.width ?? item.tokens)) / scale}%`;
      seg.style.background = COLORS[item.placement] || "#999";
      seg.title = describe(item);
      seg.dataset.id = item.id;
      fragment.append(seg);
    }
    strip.replaceChildren(fragment);
    const lines = model.get("marks") || {};
    const markFragment = document.createDocumentFragment();
    let row = 0;
    for (const [name, tokens] of Object.entries(lines)) {
      const mark = document.createElement("div");
      const label = document.createElement("span");
      if (typeof tokens !== "number") {
        // Not known (a recording's own agent's lines are not in its file): said, not drawn —
        // never a line at 0.
        mark.className = "ctxlab-mark unknown";
        mark.title = `${name}: unknown`;
        label.textContent = `${name} unknown`;
        label.style.top = `${12 * row++}px`;
        mark.append(label);
        markFragment.append(mark);
        continue;
      }
      mark.className = "ctxlab-mark";
      const at = Math.min(100, (100 * tokens) / scale);
      mark.style.left = `${at}%`;
      mark.title = `${name}: ${tokens} tokens`;
      label.textContent = `${name} ${tokens.toLocaleString()}`;
      // Near the right end the label goes to the left of its line, so it is never clipped.
      if (at > 80) label.className = "left";
      label.style.top = `${12 * row++}px`; // one row each: close lines never overlap
      mark.append(label);
      markFragment.append(mark);
    }
    marks.replaceChildren(markFragment);
    const count = model.get("count") ?? items.length;
    info.textContent = current.id !== undefined ? describe(current) : `${count} items`;
  }

  // Event delegation: one listener for any number of segments.
  function clicked(event) {
    const seg = event.target.closest(".ctxlab-seg");
    if (!seg) return;
    model.set("selected", seg.dataset.id);
    model.save_changes();
    model.send({ type: "open", id: seg.dataset.id }); // opens again when already selected
  }
  function hovered(event) {
    const seg = event.target.closest(".ctxlab-seg");
    if (seg) info.textContent = seg.title;
  }
  strip.addEventListener("click", clicked);
  strip.addEventListener("mouseover", hovered);

  const names = ["segments", "current", "count", "selected", "marks", "scale"];
  for (const name of names) model.on(`change:${name}`, draw);
  draw();
  return () => {
    for (const name of names) model.off(`change:${name}`, draw);
    strip.removeEventListener("click", clicked);
    strip.removeEventListener("mouseover", hovered);
  };
}

export default { render };
