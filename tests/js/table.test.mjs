// The items table's front end (widgets/table.js) on a fake model and DOM: it draws the page
// of rows Python sends, asks for the next page, writes what the reader asks back to the model, renders any text
// inert, and removes every listener on teardown.
import assert from "node:assert/strict";
import { beforeEach, test } from "node:test";

import { FakeModel, PAYLOAD, installDocument, tagsBelow } from "./fake.mjs";

installDocument();
const { default: widget, nextSort, countText } = await import("../../widgets/table.js");

let model;
let el;
let teardown;

beforeEach(() => {
  model = new FakeModel({
    columns: ["id", "tokens", "preview"],
    page_rows: [
      ["msg/2", 7, null],
      ["msg/0", 12, "hello"],
      ["msg/1", 300, PAYLOAD],
    ],
    page: 0,
    page_size: 100,
    shown: 3,
    total: 3,
    key: "id",
    filter: "",
    sort: ["", ""],
    selected: "",
    css_class: "ctxlab-items",
  });
  el = document.createElement("div");
  teardown = widget.render({ model, el });
});

const bodyRows = () => el.querySelectorAll("tr").filter((tr) => tr.parentNode.tagName === "TBODY");
const cells = () => bodyRows().map((tr) => tr.children.map((td) => td.textContent));

test("draws the rows Python ordered, and says how many of how many", () => {
  assert.deepEqual(cells(), [
    ["msg/2", "7", ""],
    ["msg/0", "12", "hello"],
    ["msg/1", "300", PAYLOAD],
  ]);
  assert.equal(el.querySelectorAll(".ctxlab-table-count")[0].textContent, "3 rows");
  model.update("shown", 1);
  model.update("page_rows", [["msg/1", 300, PAYLOAD]]);
  assert.deepEqual(cells(), [["msg/1", "300", PAYLOAD]]);
  assert.equal(el.querySelectorAll(".ctxlab-table-count")[0].textContent, "1 of 3 rows");
});

test("more rows than a page: the pager asks Python for the next page and says which rows", () => {
  const [previous, next] = [".ctxlab-table-previous", ".ctxlab-table-next"].map(
    (s) => el.querySelectorAll(s)[0],
  );
  assert.ok(previous.hidden && next.hidden); // one page: no pager
  model.update("page_size", 2);
  model.update("total", 5);
  model.update("shown", 5);
  model.update("page_rows", [["a", 1, "x"], ["b", 2, "y"]]);
  assert.equal(el.querySelectorAll(".ctxlab-table-count")[0].textContent, "1–2 of 5 rows");
  assert.ok(previous.hidden && !next.hidden);
  next.dispatch("click");
  assert.equal(model.get("page"), 1);
  assert.equal(model.saved, 1);
  model.update("page_rows", [["c", 3, "z"], ["d", 4, "w"]]);
  assert.deepEqual(cells(), [["c", "3", "z"], ["d", "4", "w"]]);
  assert.equal(countText(model, 2), "3–4 of 5 rows");
  assert.ok(!previous.hidden && !next.hidden);
  model.update("page", 2);
  model.update("page_rows", [["e", 5, "v"]]);
  assert.equal(el.querySelectorAll(".ctxlab-table-count")[0].textContent, "5–5 of 5 rows");
  assert.ok(next.hidden);
  previous.dispatch("click");
  assert.equal(model.get("page"), 1);
});

test("a payload in a cell or a column name stays text", () => {
  model.update("columns", ["id", PAYLOAD, "preview"]);
  assert.deepEqual([...tagsBelow(el)].sort(), ["button", "div", "input", "span", "table", "tbody", "td", "th", "thead", "tr"]);
  assert.equal(el.querySelectorAll("th")[1].textContent, PAYLOAD);
  assert.equal(globalThis.pwned, undefined);
});

test("a header click asks for the next sort; a row click selects and opens the row", () => {
  const tokens = el.querySelectorAll("th")[1];
  tokens.dispatch("click");
  assert.deepEqual(model.get("sort"), ["tokens", "asc"]);
  assert.equal(model.saved, 1);
  // Python answers with the page in that order; the header shows the direction.
  model.update("page_rows", model.get("page_rows"));
  assert.equal(el.querySelectorAll("th")[1].textContent, "tokens ▲");
  assert.equal(el.querySelectorAll("th")[1].getAttribute("aria-sort"), "ascending");
  el.querySelectorAll("th")[1].dispatch("click");
  assert.deepEqual(model.get("sort"), ["tokens", "desc"]);
  el.querySelectorAll("th")[1].dispatch("click");
  assert.deepEqual(model.get("sort"), ["", ""]);
  const cell = bodyRows()[1].children[2];
  cell.dispatch("click"); // on a cell: the row is found by delegation
  assert.equal(model.get("selected"), "msg/0");
  assert.deepEqual(model.sent.at(-1), { type: "open", id: "msg/0" });
  assert.ok(bodyRows()[1].classList.contains("selected"));
  bodyRows()[1].dispatch("click"); // already selected: opens again
  assert.equal(model.sent.length, 2);
});

test("typing in the filter writes it to the model", () => {
  const input = el.querySelectorAll("input")[0];
  input.value = "HELLO";
  input.dispatch("input");
  assert.equal(model.get("filter"), "HELLO");
  assert.equal(model.saved, 1);
});

test("nextSort cycles ascending, descending, none; another column starts ascending", () => {
  assert.deepEqual(nextSort(["", ""], "a"), ["a", "asc"]);
  assert.deepEqual(nextSort(["a", "asc"], "a"), ["a", "desc"]);
  assert.deepEqual(nextSort(["a", "desc"], "a"), ["", ""]);
  assert.deepEqual(nextSort(["a", "desc"], "b"), ["b", "asc"]);
});

test("teardown removes every model handler and DOM listener", () => {
  assert.ok(model.handlerCount() > 0);
  teardown();
  assert.equal(model.handlerCount(), 0);
  assert.equal(el.querySelectorAll("table")[0].listenerCount(), 0);
  for (const button of el.querySelectorAll("button")) assert.equal(button.listenerCount(), 0);
});
