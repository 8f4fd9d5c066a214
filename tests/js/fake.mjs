// A fake anywidget model and the smallest DOM the front ends use, for node's test runner (no
// browser, no build step, no npm package). The DOM refuses markup: `innerHTML`,
// `outerHTML` and `insertAdjacentHTML` throw, so a view that would interpret text as HTML fails
// its test instead of rendering a payload.

class ClassList {
  constructor(element) {
    this.element = element;
  }
  get values() {
    return this.element.className.split(/\s+/).filter(Boolean);
  }
  add(...names) {
    const values = this.values;
    for (const name of names) if (!values.includes(name)) values.push(name);
    this.element.className = values.join(" ");
  }
  remove(...names) {
    this.element.className = this.values.filter((v) => !names.includes(v)).join(" ");
  }
  contains(name) {
    return this.values.includes(name);
  }
}

class Node {
  constructor() {
    this.childNodes = [];
    this.parentNode = null;
  }
  append(...nodes) {
    for (const node of nodes) {
      const child = typeof node === "string" ? new Text(node) : node;
      if (child instanceof Fragment) {
        for (const inner of [...child.childNodes]) this.append(inner);
        child.childNodes = [];
        continue;
      }
      if (child.parentNode) child.parentNode.childNodes.splice(child.parentNode.childNodes.indexOf(child), 1);
      child.parentNode = this;
      this.childNodes.push(child);
    }
  }
  appendChild(node) {
    this.append(node);
    return node;
  }
  replaceChildren(...nodes) {
    for (const child of this.childNodes) child.parentNode = null;
    this.childNodes = [];
    this.append(...nodes);
  }
  get children() {
    return this.childNodes.filter((n) => n instanceof Element);
  }
  get textContent() {
    return this.childNodes.map((n) => n.textContent).join("");
  }
  set textContent(value) {
    this.replaceChildren(new Text(String(value)));
  }
  contains(other) {
    for (let node = other; node; node = node.parentNode) if (node === this) return true;
    return false;
  }
}

class Text extends Node {
  constructor(text) {
    super();
    this.text = text;
  }
  get textContent() {
    return this.text;
  }
}

class Fragment extends Node {}

function matches(element, selector) {
  // The selectors the views use: "tag", ".class", "tag[data-name]", "tag.class", and lists
  // of them ("a, b").
  if (selector.includes(",")) return selector.split(",").some((one) => matches(element, one.trim()));
  const match = /^([a-z]*)((?:\.[\w-]+)*)(?:\[data-([\w-]+)\])?$/.exec(selector);
  if (!match) throw new Error(`the fake DOM does not read the selector ${selector}`);
  const [, tag, classes, data] = match;
  if (tag && element.tagName !== tag.toUpperCase()) return false;
  for (const name of classes.split(".").filter(Boolean)) if (!element.classList.contains(name)) return false;
  if (data) {
    const key = data.replace(/-([a-z])/g, (_, c) => c.toUpperCase());
    if (!(key in element.dataset)) return false;
  }
  return true;
}

export class Element extends Node {
  constructor(tag) {
    super();
    this.tagName = tag.toUpperCase();
    this.className = "";
    this.classList = new ClassList(this);
    this.style = {};
    this.dataset = {};
    this.attributes = {};
    this.listeners = {};
    this.title = "";
    this.id = "";
  }
  set innerHTML(_) {
    throw new Error("innerHTML: the view interprets text as markup");
  }
  get innerHTML() {
    throw new Error("innerHTML read: the views never need it");
  }
  set outerHTML(_) {
    throw new Error("outerHTML: the view interprets text as markup");
  }
  insertAdjacentHTML() {
    throw new Error("insertAdjacentHTML: the view interprets text as markup");
  }
  setAttribute(name, value) {
    this.attributes[name] = String(value);
  }
  getAttribute(name) {
    return this.attributes[name] ?? null;
  }
  addEventListener(type, listener) {
    (this.listeners[type] ||= []).push(listener);
  }
  removeEventListener(type, listener) {
    this.listeners[type] = (this.listeners[type] || []).filter((l) => l !== listener);
  }
  listenerCount() {
    return Object.values(this.listeners).reduce((n, list) => n + list.length, 0);
  }
  // An event at this element, bubbling up through its ancestors as a browser's does.
  dispatch(type, extra = {}) {
    const event = { type, target: this, ...extra };
    for (let node = this; node; node = node.parentNode) {
      for (const listener of [...((node.listeners && node.listeners[type]) || [])]) listener(event);
    }
    return event;
  }
  closest(selector) {
    for (let node = this; node instanceof Element; node = node.parentNode) {
      if (matches(node, selector)) return node;
    }
    return null;
  }
  querySelectorAll(selector) {
    const found = [];
    const walk = (node) => {
      for (const child of node.children) {
        if (matches(child, selector)) found.push(child);
        walk(child);
      }
    };
    walk(this);
    return found;
  }
  // Tables, as the items table builds them: each adds its part as the last child.
  adding(tag) {
    const part = new Element(tag);
    this.append(part);
    return part;
  }
  createTHead() {
    return this.adding("thead");
  }
  createTBody() {
    return this.adding("tbody");
  }
  get tHead() {
    return this.children.find((c) => c.tagName === "THEAD") || null;
  }
  get tBodies() {
    return this.children.filter((c) => c.tagName === "TBODY");
  }
  insertRow() {
    return this.adding("tr");
  }
  insertCell() {
    return this.adding("td");
  }
}

// Every element below `root` created from text must be one the view made itself: the tags it
// may create. A payload interpreted as markup would add others (img, script, svg...).
export function tagsBelow(root) {
  const tags = new Set();
  const walk = (node) => {
    for (const child of node.children) {
      tags.add(child.tagName.toLowerCase());
      walk(child);
    }
  };
  walk(root);
  return tags;
}

export function installDocument() {
  const head = new Element("head");
  const byId = new Map();
  const document = {
    head,
    createElement: (tag) => new Element(tag),
    createTextNode: (text) => new Text(text),
    createDocumentFragment: () => new Fragment(),
    getElementById: (id) => byId.get(id) || head.children.find((c) => c.id === id) || null,
  };
  globalThis.document = document;
  globalThis.window = globalThis;
  return document;
}

// anywidget's model, as a view sees it: get/set/save_changes, change events, custom messages.
export class FakeModel {
  constructor(state) {
    this.state = { ...state };
    this.handlers = {};
    this.sent = [];
    this.saved = 0;
  }
  get(name) {
    return this.state[name];
  }
  set(name, value) {
    this.state[name] = value;
    this.emit(`change:${name}`);
  }
  save_changes() {
    this.saved += 1;
  }
  send(message) {
    this.sent.push(message);
  }
  on(event, handler) {
    (this.handlers[event] ||= []).push(handler);
  }
  off(event, handler) {
    this.handlers[event] = (this.handlers[event] || []).filter((h) => h !== handler);
  }
  emit(event, ...args) {
    for (const handler of [...(this.handlers[event] || [])]) handler(...args);
  }
  // What Python would do: set a trait from the kernel side (the view redraws).
  update(name, value) {
    this.state[name] = value;
    this.emit(`change:${name}`);
  }
  handlerCount() {
    return Object.values(this.handlers).reduce((n, list) => n + list.length, 0);
  }
}

export const PAYLOAD = '<img src=x onerror="globalThis.pwned=1"><script>globalThis.pwned=1</script>';
