// The items table's front end (widgets/table.js) on a fake model and DOM: it draws the rows
// in the order Python gives, writes what the reader asks back to the model, renders any text
// inert, and removes every listener on teardown.
import assert from "node:assert/strict";
import { beforeEach, test } from "node:test";

import { FakeModel, PAYLOAD, installDocument, tagsBelow } from "./fake.mjs";

installDocument();
const { default: widget, nextSort, orderedRows } = await import("../../widgets/table.js");

let model;
let el;
let teardown;

beforeEach(() => {
  model = new FakeModel({
    columns: ["id", "tokens", "preview"],
    rows: [
      ["msg/0", 12, "hello"],
      ["msg/1", 300, PAYLOAD],
      ["msg/2", 7, null],
    ],
    order: [2, 0, 1],
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
  model.update("order", [1]);
  assert.deepEqual(cells(), [["msg/1", "300", PAYLOAD]]);
  assert.equal(el.querySelectorAll(".ctxlab-table-count")[0].textContent, "1 of 3 rows");
});

test("an order past new rows is skipped until Python's order arrives", () => {
  model.update("rows", [["a", 1, "x"]]);
  assert.deepEqual(orderedRows(model), [["a", 1, "x"]]);
  assert.deepEqual(cells(), [["a", "1", "x"]]);
});

test("a payload in a cell or a column name stays text", () => {
  model.update("columns", ["id", PAYLOAD, "preview"]);
  assert.deepEqual([...tagsBelow(el)].sort(), ["div", "input", "span", "table", "tbody", "td", "th", "thead", "tr"]);
  assert.equal(el.querySelectorAll("th")[1].textContent, PAYLOAD);
  assert.equal(globalThis.pwned, undefined);
});

test("a header click asks for the next sort; a row click selects and opens the row", () => {
  const tokens = el.querySelectorAll("th")[1];
  tokens.dispatch("click");
  assert.deepEqual(model.get("sort"), ["tokens", "asc"]);
  assert.equal(model.saved, 1);
  // Python answers with the order; the header shows the direction.
  model.update("order", [2, 0, 1]);
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
});
