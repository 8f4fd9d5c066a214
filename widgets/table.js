// A sortable, filterable table of text cells, ctxlab's own (no grid dependency: it must work
// wherever anywidget does — JupyterLab 4, Notebook 7, VS Code, Colab).
//
// The rules are Python's (`ctxlab.widgets._table.DataTable`): this view writes what the reader
// asks (`filter`, `sort`) to the model and draws the rows Python answers with (`order`: the
// indices of the visible rows, in order). Cells are set as textContent: tool output is never
// interpreted as markup.

// The rows to draw: `order`'s indices into `rows` (an index past the rows — new rows whose
// order is still on its way — is skipped).
export function orderedRows(model) {
  const rows = model.get("rows") || [];
  const order = model.get("order");
  if (!Array.isArray(order)) return rows;
  return order.filter((i) => i >= 0 && i < rows.length).map((i) => rows[i]);
}

// A click on a header: ascending, then descending, then back to the original order.
export function nextSort(current, column) {
  const [col, direction] = current;
  if (col !== column) return [column, "asc"];
  if (direction === "asc") return [column, "desc"];
  return ["", ""];
}

function render({ model, el }) {
  el.classList.add("ctxlab-table");
  const bar = document.createElement("div");
  bar.className = "ctxlab-table-bar";
  const input = document.createElement("input");
  input.type = "search";
  input.className = "ctxlab-table-filter";
  input.placeholder = "filter: any text in a row…";
  const count = document.createElement("span");
  count.className = "ctxlab-table-count";
  bar.append(input, count);
  const scroller = document.createElement("div");
  scroller.className = "ctxlab-table-scroll";
  const table = document.createElement("table");
  scroller.appendChild(table);
  el.append(bar, scroller);

  input.addEventListener("input", () => {
    model.set("filter", input.value);
    model.save_changes();
  });

  function draw() {
    const columns = model.get("columns");
    const key = columns.indexOf(model.get("key"));
    const [sortColumn, direction] = model.get("sort");
    const rows = orderedRows(model);
    const total = model.get("rows").length;
    if (input.value !== model.get("filter")) input.value = model.get("filter");
    count.textContent = rows.length === total ? `${total} rows` : `${rows.length} of ${total} rows`;
    table.className = `dataframe ${model.get("css_class")}`;
    table.replaceChildren();
    const head = table.createTHead().insertRow();
    for (const column of columns) {
      const th = document.createElement("th");
      th.textContent = column;
      th.title = "sort by " + column;
      th.dataset.column = column;
      if (column === sortColumn && direction) {
        th.classList.add("sorted");
        th.textContent += direction === "asc" ? " ▲" : " ▼";
        th.setAttribute("aria-sort", direction === "asc" ? "ascending" : "descending");
      }
      head.appendChild(th);
    }
    const body = table.createTBody();
    const selected = model.get("selected");
    for (const row of rows) {
      const tr = body.insertRow();
      const id = key >= 0 ? String(row[key]) : "";
      if (id && id === selected) tr.classList.add("selected");
      if (key >= 0) tr.dataset.id = id;
      for (const cell of row) {
        const td = tr.insertCell();
        td.textContent = cell === null ? "" : String(cell);
      }
    }
  }

  // One delegated listener for every header and row, whatever the redraws (as the context
  // map does): a header sorts, a row with a key is selected and opened.
  function clicked(event) {
    const th = event.target.closest("th[data-column]");
    if (th && table.tHead && table.tHead.contains(th)) {
      model.set("sort", nextSort(model.get("sort"), th.dataset.column));
      model.save_changes();
      return;
    }
    const tr = event.target.closest("tr[data-id]");
    if (tr && table.tBodies[0] && table.tBodies[0].contains(tr)) {
      model.set("selected", tr.dataset.id);
      model.save_changes();
      // Said even when the row was already selected (no change to sync): it opens again.
      model.send({ type: "open", id: tr.dataset.id });
    }
  }
  table.addEventListener("click", clicked);

  draw();
  const names = ["rows", "order", "columns", "filter", "sort", "selected", "key", "css_class"];
  for (const name of names) model.on(`change:${name}`, draw);
  return () => {
    for (const name of names) model.off(`change:${name}`, draw);
    table.removeEventListener("click", clicked);
  };
}

export default { render };
