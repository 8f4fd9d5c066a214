// A sortable, filterable table of text cells, ctxlab's own (no grid dependency: it must work
// wherever anywidget does — JupyterLab 4, Notebook 7, VS Code, Colab).
//
// The rules are Python's (`ctxlab.widgets._table.DataTable`): this view writes what the reader
// asks (`filter`, `sort`, `page`) to the model and draws the rows Python answers with
// (`page_rows`: the visible rows of that page, in order; the other rows stay in the kernel).
// Cells are set as textContent: tool output is never interpreted as markup.

// The rows to draw: the page Python sent.
export function orderedRows(model) {
  return model.get("page_rows") || [];
}

// The count line: which rows of how many are shown ("101–200 of 9,870 rows (of 10,000)").
export function countText(model, drawn) {
  const shown = model.get("shown") ?? drawn;
  const total = model.get("total") ?? shown;
  const of = shown === total ? `${total} rows` : `${shown} of ${total} rows`;
  if (drawn >= shown) return of;
  const first = (model.get("page") || 0) * (model.get("page_size") || drawn) + 1;
  return `${first}–${first + drawn - 1} of ${of}`;
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
  // The pager: the kernel sends the page asked for.
  const pager = {};
  for (const [name, text, step] of [["previous", "‹ previous", -1], ["next", "next ›", 1]]) {
    const button = document.createElement("button");
    button.className = `ctxlab-table-${name}`;
    button.textContent = text;
    button.turn = () => {
      model.set("page", Math.max((model.get("page") || 0) + step, 0));
      model.save_changes();
    };
    button.addEventListener("click", button.turn);
    pager[name] = button;
  }
  bar.append(input, pager.previous, count, pager.next);
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
    if (input.value !== model.get("filter")) input.value = model.get("filter");
    count.textContent = countText(model, rows.length);
    const page = model.get("page") || 0;
    const size = model.get("page_size") || rows.length;
    pager.previous.hidden = page <= 0;
    pager.next.hidden = (page + 1) * size >= (model.get("shown") ?? rows.length);
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
  const names = ["page_rows", "shown", "total", "page", "columns", "filter", "sort", "selected", "key", "css_class"];
  for (const name of names) model.on(`change:${name}`, draw);
  return () => {
    for (const name of names) model.off(`change:${name}`, draw);
    table.removeEventListener("click", clicked);
    for (const button of Object.values(pager)) button.removeEventListener("click", button.turn);
  };
}

export default { render };
