// The operator console. It calls only the documented HTTP API of the server
// that serves it: the operator routes with the operator token, and the
// seller's and buyer's routes with a token that the operator issues for the
// user (POST /operator/users/{id}/tokens), kept per user in session storage.
"use strict";

const store = window.sessionStorage;
const $ = (sel, root) => (root || document).querySelector(sel);
const $$ = (sel, root) => Array.from((root || document).querySelectorAll(sel));

// el builds an element; text goes in as text, never as markup.
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(e.dataset, v);
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

function fill(tbody, rows) {
  tbody.replaceChildren(...rows);
  if (rows.length === 0) {
    const cols = tbody.closest("table").querySelectorAll("thead th").length;
    tbody.append(el("tr", {}, el("td", { colspan: cols, class: "hint" }, "Nothing yet.")));
  }
}

function say(text, kind) {
  const m = $("#message");
  m.textContent = text;
  m.className = kind || "";
}

// describe is the one line an error answer gets: its status, code and
// message, then its causes (the allowed next statuses of a refused move,
// say), if it has any.
function describe(res) {
  const b = res.body || {};
  const line = `${res.status} ${b.error || ""}: ${b.message || res.text || ""}`.trim();
  const causes = Array.isArray(b.cause) ? causesText(b.cause) : "";
  return causes ? `${line} (${causes})` : line;
}

// causesText writes causes as "code: message", the messages of
// consecutive causes of one code together ("allowed_next_status: delivered,
// not_delivered").
function causesText(list) {
  const groups = [];
  for (const c of list) {
    if (c === null || c === undefined) continue;
    const code = typeof c === "object" ? c.code || "" : "";
    const message = typeof c === "object" ? c.message || "" : String(c);
    const last = groups[groups.length - 1];
    if (last && code && last.code === code) last.messages.push(message);
    else groups.push({ code, messages: [message] });
  }
  return groups.map((g) => [g.code, g.messages.filter(Boolean).join(", ")].filter(Boolean).join(": ")).join("; ");
}

class APIError extends Error {
  constructor(res) { super(describe(res)); this.res = res; }
}

// api sends one request; token defaults to the operator's. It resolves to
// {status, headers, body} for any answer and rejects only on 4xx/5xx
// (with the answer) unless raw is set.
// pending counts the requests in flight, in the body's data-pending, so that
// a test (or a curious operator) can tell when the page has settled.
let pending = 0;
function busy(d) {
  pending += d;
  document.body.dataset.pending = String(pending);
}

async function api(method, path, body, opts) {
  busy(+1);
  try {
    return await send(method, path, body, opts);
  } finally {
    busy(-1);
  }
}

async function send(method, path, body, opts) {
  opts = opts || {};
  const headers = Object.assign({}, opts.headers || {});
  const token = opts.token === undefined ? store.getItem("operatorToken") : opts.token;
  if (token) headers["Authorization"] = "Bearer " + token;
  const init = { method, headers };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const r = await fetch(path, init);
  const text = await r.text();
  let parsed = null;
  try { parsed = text ? JSON.parse(text) : null; } catch (e) { parsed = null; }
  const res = { status: r.status, headers: r.headers, body: parsed, text };
  if (!opts.raw && r.status >= 400) throw new APIError(res);
  return res;
}

// userToken returns a token of user id, issuing one through the operator
// route the first time; fresh issues a new one (after a reset or a revoke).
async function userToken(id, fresh) {
  const key = "userToken:" + id;
  if (!fresh && store.getItem(key)) return store.getItem(key);
  const res = await api("POST", `/operator/users/${id}/tokens`);
  store.setItem(key, res.body.access_token);
  return res.body.access_token;
}

// asUser calls a route with the token of user id, issuing a new token once
// when the kept one no longer works.
async function asUser(id, method, path, body, opts) {
  opts = Object.assign({}, opts || {}, { raw: true });
  let res = await api(method, path, body, Object.assign({}, opts, { token: await userToken(id) }));
  if (res.status === 401) {
    res = await api(method, path, body, Object.assign({}, opts, { token: await userToken(id, true) }));
  }
  if (res.status >= 400) throw new APIError(res);
  return res;
}

function forgetUserTokens() {
  for (let i = store.length - 1; i >= 0; i--) {
    const k = store.key(i);
    if (k && k.startsWith("userToken:")) store.removeItem(k);
  }
}

// guarded runs an action of the page and shows its error, if any.
function guarded(fn) {
  return async (ev) => {
    if (ev && ev.preventDefault) ev.preventDefault();
    try {
      await fn(ev);
    } catch (e) {
      say(e.message, "error");
    }
  };
}

function on(sel, event, fn) { $(sel).addEventListener(event, guarded(fn)); }

const splitList = (s) => s.split(",").map((x) => x.trim()).filter(Boolean);
const positive = (s, name) => {
  const n = Number(s);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} must be a positive integer`);
  return n;
};

// pager renders previous/next for a {paging} answer and calls load(offset).
function pager(node, paging, load) {
  const { total, offset, limit } = paging;
  const last = Math.min(offset + limit, total);
  node.replaceChildren(
    el("button", { type: "button", disabled: offset === 0, onclick: () => load(Math.max(0, offset - limit)) }, "‹ Previous"),
    el("span", {}, total ? `${offset + 1}–${last} of ${total}` : "0 of 0"),
    el("button", { type: "button", disabled: last >= total, onclick: () => load(offset + limit) }, "Next ›"),
  );
}

const PAGE = 20;

// ---- pick lists ----------------------------------------------------------

// PICK is how many entries a pick list (users, items) holds: the most a
// page of the operator lists gives.
const PICK = 1000;

// sellerPicked is the seller last picked on any screen, so that Items,
// Orders, Questions and Response time show the same seller until another
// is picked.
let sellerPicked = 0;

async function listUsers() {
  const res = await api("GET", `/operator/users?limit=${PICK}`);
  return res.body.results;
}

// pickUser fills a select with the users and picks want when it is among
// them, else the first user other than avoid, else the first; it answers
// the id picked (0 when there is no user).
function pickUser(select, users, want, avoid) {
  select.replaceChildren(...users.map((u) => el("option", { value: u.id }, `${u.nickname} (${u.id})`)));
  const u = users.find((x) => x.id === want) || users.find((x) => x.id !== avoid) || users[0];
  if (u) select.value = u.id;
  return u ? u.id : 0;
}

// pickSeller fills a seller list with the seller last picked, else the
// user open on the Users screen, else the first user: a screen never opens
// empty waiting for an id, and with -demo it opens on the demo seller, the
// first user the server creates.
async function pickSeller(select) {
  const users = await listUsers();
  sellerPicked = pickUser(select, users, sellerPicked || selectedUser);
  return users;
}

// seconds is an RFC 3339 time without its fraction of a second: the server
// keeps nanoseconds, a reader wants the second.
const seconds = (t) => String(t).replace(/\.\d+(?=Z$|[+-]\d\d:\d\d$)/, "");

// stamp is a time to the second that wraps, if it must, between the date
// and the time of day, never at the hyphens within them.
function stamp(t) {
  const [day, time] = seconds(t).split(/(?=T)/);
  return el("span", { class: "stamp" }, el("span", {}, day), el("wbr"), time ? el("span", {}, time) : null);
}

// ---- screens -------------------------------------------------------------

const screens = {};
let current = "";
let ticker = 0;

function show(name) {
  if (!document.getElementById("screen-" + name) || name === "signin") name = "users";
  if (!store.getItem("operatorToken")) name = "signin";
  current = name;
  for (const s of $$("main > section")) s.hidden = s.id !== "screen-" + name;
  for (const b of $$("nav button")) b.classList.toggle("active", b.dataset.screen === name);
  const signedIn = name !== "signin";
  $("#nav").hidden = !signedIn;
  $("#session").hidden = !signedIn;
  if (location.hash !== "#" + name) history.replaceState(null, "", "#" + name);
  clearInterval(ticker);
  if (signedIn) {
    refreshClock();
    const s = screens[name];
    if (s && s.enter) guarded(s.enter)();
    if (s && s.tick) ticker = setInterval(guarded(s.tick), 1000);
  }
}

async function refreshClock() {
  const res = await api("GET", "/operator/clock", undefined, { raw: true });
  const text = res.status === 200 ? seconds(res.body.now) : "wall clock";
  $("#clock-now").textContent = text;
  $("#clock-value").textContent = text;
  // The Set field's example is a day after the server's clock: the clock
  // never moves back, so an example before it would be refused as written.
  const now = res.status === 200 ? Date.parse(res.body.now) : Date.now();
  if (!Number.isNaN(now)) $("#clock-set-input").placeholder = seconds(new Date(now + 86400 * 1000).toISOString());
  return res;
}

// signIn checks the token with an operator read before it keeps it.
async function signIn(token) {
  const res = await api("GET", "/operator/users?limit=1", undefined, { token, raw: true });
  if (res.status !== 200) throw new APIError(res);
  store.setItem("operatorToken", token);
  say("Signed in.", "ok");
  show("users");
}

on("#signin-form", "submit", async () => {
  await signIn($("#token").value.trim());
  $("#token").value = "";
});

// tokenInAddress takes a token given in the address (/console#token=...),
// for a headless browser or a script that cannot type into the form, and
// drops it from the address before anything else: replaceState rewrites the
// current history entry, so the token stays neither in the address bar nor
// in the tab's history. A fragment is never sent to the server, so it is in
// no request log either. It answers the token, or null.
function tokenInAddress() {
  const m = /^#token=([^&]*)/.exec(location.hash);
  if (!m) return null;
  history.replaceState(null, "", location.pathname + location.search);
  try {
    return decodeURIComponent(m[1]).trim();
  } catch (e) {
    return m[1].trim();
  }
}

// route shows what the address asks for: a sign-in with the token it
// carries, else the screen it names.
async function route() {
  const token = tokenInAddress();
  if (token === null) {
    show((location.hash || "#users").slice(1) || "users");
    return;
  }
  try {
    await signIn(token);
  } catch (e) {
    show("users");
    say(e.message, "error");
  }
}

window.addEventListener("hashchange", () => { if (/^#token=/.test(location.hash)) route(); });

on("#signout", "click", async () => {
  store.clear();
  say("Signed out.");
  show("signin");
});

for (const b of $$("nav button")) b.addEventListener("click", () => { say(""); show(b.dataset.screen); });

// ---- users ---------------------------------------------------------------

let selectedUser = 0;

screens.users = {
  async enter() { await loadUsers(0); if (selectedUser) await openUser(selectedUser); },
};

async function loadUsers(offset) {
  const res = await api("GET", `/operator/users?offset=${offset}&limit=${PAGE}`);
  fill($("#users-table tbody"), res.body.results.map((u) =>
    el("tr", { dataset: { userId: u.id }, class: u.id === selectedUser ? "selected" : null },
      el("td", {}, u.id), el("td", {}, u.nickname), el("td", {}, u.site_id), el("td", {}, u.tags.join(", ")),
      el("td", {}, u.registration_date),
      el("td", {}, el("button", { type: "button", class: "user-open", onclick: guarded(() => openUser(u.id)) }, "Open")))));
  pager($("#users-pager"), res.body.paging, guarded((o) => loadUsers(o)));
}

on("#user-form", "submit", async () => {
  const res = await api("POST", "/operator/users", {
    nickname: $("#user-nickname").value, site_id: $("#user-site").value, tags: splitList($("#user-tags").value),
  });
  store.setItem("userToken:" + res.body.id, res.body.access_token);
  say(`Created user ${res.body.id} (${res.body.nickname}).`, "ok");
  $("#user-nickname").value = "";
  selectedUser = res.body.id;
  await loadUsers(0);
  await openUser(res.body.id);
});

async function openUser(id) {
  const res = await api("GET", `/operator/users/${id}`);
  const u = res.body;
  selectedUser = u.id;
  for (const tr of $$("#users-table tbody tr")) tr.classList.toggle("selected", Number(tr.dataset.userId) === u.id);
  $("#user-detail").hidden = false;
  $("#detail-id").textContent = u.id;
  $("#detail-nickname").textContent = u.nickname;
  $("#detail-tags").value = u.tags.join(", ");
  $("#detail-token-out").textContent = "";
  await loadStores(u.id);
}

async function loadStores(id) {
  const res = await api("GET", `/operator/users/${id}/stores?limit=100`);
  fill($("#stores-table tbody"), res.body.results.map((s) =>
    el("tr", { dataset: { storeId: s.id } }, el("td", {}, s.id), el("td", {}, s.description),
      el("td", {}, (s.tags || []).join(", ")), el("td", {}, s.network_node_id), el("td", {}, s.status))));
}

on("#tags-form", "submit", async () => {
  await api("PUT", `/operator/users/${selectedUser}/tags`, { tags: splitList($("#detail-tags").value) });
  say(`Tags of ${selectedUser} saved.`, "ok");
  await loadUsers(0);
});

on("#detail-token-issue", "click", async () => {
  const res = await api("POST", `/operator/users/${selectedUser}/tokens`);
  store.setItem("userToken:" + selectedUser, res.body.access_token);
  $("#detail-token-out").textContent = res.body.access_token;
  say(`Issued a token for ${selectedUser}.`, "ok");
});

on("#detail-tokens-revoke", "click", async () => {
  await api("DELETE", `/operator/users/${selectedUser}/tokens`);
  store.removeItem("userToken:" + selectedUser);
  $("#detail-token-out").textContent = "";
  say(`Every token of ${selectedUser} is revoked.`, "ok");
});

on("#store-form", "submit", async () => {
  const res = await api("POST", `/operator/users/${selectedUser}/stores`, {
    description: $("#store-description").value, tags: splitList($("#store-tags").value),
    location: { address_line: "Calle 1 100", city: $("#store-city").value, zip_code: "1000" },
  });
  say(`Created store ${res.body.id}.`, "ok");
  await loadStores(selectedUser);
});

// ---- items and stock -----------------------------------------------------

let itemsSeller = 0;
let sellerStores = [];
let stockOpen = null; // {up, version, seller}

screens.items = {
  async enter() {
    await pickSeller($("#items-seller"));
    await showItemsOf(sellerPicked);
  },
};

async function showItemsOf(seller) {
  if (seller !== itemsSeller) $("#stock-panel").hidden = true;
  sellerPicked = itemsSeller = seller;
  if (itemsSeller) await loadItems(0);
}

on("#items-form", "submit", () => showItemsOf(positive($("#items-seller").value, "seller id")));
on("#items-seller", "change", () => showItemsOf(positive($("#items-seller").value, "seller id")));

async function loadItems(offset) {
  const seller = itemsSeller;
  const [items, user, stores] = await Promise.all([
    api("GET", `/operator/items?seller_id=${seller}&offset=${offset}&limit=${PAGE}`),
    api("GET", `/operator/users/${seller}`),
    api("GET", `/operator/users/${seller}/stores?tags=stock_location&limit=100`),
  ]);
  $("#items-body").hidden = false;
  const multi = user.body.tags.includes("warehouse_management");
  sellerStores = multi ? stores.body.results : [];
  // Quantity fields: one per stock-location store of a seller who manages
  // warehouses, else the item's single quantity.
  const fields = sellerStores.length
    ? sellerStores.map((s) => el("label", {}, `Store ${s.id}`,
      el("input", { class: "publish-qty", size: 4, value: 1, dataset: { storeId: s.id, node: s.network_node_id } })))
    : [el("label", {}, "Quantity", el("input", { id: "item-quantity", size: 4, value: 1 }))];
  $("#item-stock-fields").replaceChildren(...fields);
  fill($("#items-table tbody"), items.body.results.map((it) =>
    el("tr", { dataset: { itemId: it.id } }, el("td", {}, it.id), el("td", {}, it.title),
      el("td", {}, `${it.price} ${it.currency_id}`), el("td", { class: "item-status" }, itemStatus(it)),
      el("td", { class: "available" }, it.available_quantity), el("td", { class: "sold" }, it.sold_quantity),
      el("td", {}, it.user_product_id),
      el("td", {}, el("button", { type: "button", class: "stock-open", onclick: guarded(() => openStock(it.user_product_id)) }, "Stock")))));
  pager($("#items-pager"), items.body.paging, guarded((o) => loadItems(o)));
}

// itemStatus is an item's status with its sub-status, if any: "paused
// (out_of_stock)" for an item that sold its last unit.
function itemStatus(it) {
  const sub = it.sub_status || [];
  return sub.length ? `${it.status} (${sub.join(", ")})` : it.status;
}

on("#publish-form", "submit", async () => {
  const base = {
    title: $("#item-title").value, category_id: $("#item-category").value, price: Number($("#item-price").value),
    currency_id: $("#item-currency").value, listing_type_id: "gold_special", condition: "new", channels: ["marketplace"],
  };
  let res;
  if (sellerStores.length) {
    base.stock_locations = $$(".publish-qty").map((i) => ({
      store_id: i.dataset.storeId, network_node_id: i.dataset.node, quantity: Number(i.value),
    }));
    res = await asUser(itemsSeller, "POST", "/items/multiwarehouse", base);
  } else {
    base.available_quantity = Number($("#item-quantity").value);
    res = await asUser(itemsSeller, "POST", "/items", base);
  }
  say(`Published ${res.body.id}.`, "ok");
  $("#item-title").value = "";
  await loadItems(0);
});

async function openStock(up) {
  const res = await asUser(itemsSeller, "GET", `/user-products/${up}/stock`);
  stockOpen = { up, version: res.headers.get("x-version"), seller: itemsSeller };
  $("#stock-panel").hidden = false;
  $("#stock-up").textContent = up;
  $("#stock-version").textContent = stockOpen.version;
  $("#stock-result").textContent = "";
  $("#stock-result").className = "";
  fill($("#stock-table tbody"), (res.body.locations || []).map((l) =>
    el("tr", {}, el("td", {}, l.store_id), el("td", {}, l.network_node_id),
      el("td", {}, el("input", { class: "stock-qty", value: l.quantity, dataset: { storeId: l.store_id } })))));
}

on("#stock-reload", "click", async () => { await openStock(stockOpen.up); });

on("#stock-form", "submit", async () => {
  const locations = $$(".stock-qty").map((i) => ({ store_id: i.dataset.storeId, quantity: Number(i.value) }));
  const path = `/user-products/${stockOpen.up}/stock/type/seller_warehouse`;
  const token = await userToken(stockOpen.seller);
  const res = await api("PUT", path, { locations }, { token, raw: true, headers: { "x-version": stockOpen.version } });
  const out = $("#stock-result");
  if (res.status === 409) {
    out.textContent = `Refused: ${describe(res)}. Someone changed the stock after version ${stockOpen.version} was read; read it again.`;
    out.className = "error";
    return;
  }
  if (res.status >= 400) throw new APIError(res);
  out.textContent = `Saved: version ${res.headers.get("x-version")}.`;
  out.className = "ok";
  stockOpen.version = res.headers.get("x-version");
  $("#stock-version").textContent = stockOpen.version;
  await loadItems(0);
});

// ---- orders --------------------------------------------------------------

let ordersSeller = 0;
let ordersOffset = 0;
// flow is GET /shipment_statuses by status id: the statuses a shipment in
// each may move to, and their substatuses. It never changes, so it is read
// once.
let flow = null;
// shipments is what the page knows of each shipment by id: {status,
// substatus} as last read or moved, and next when a refused move said which
// statuses are allowed.
const shipments = new Map();

screens.orders = {
  async enter() {
    await loadParties();
    if (ordersSeller) await loadOrders(ordersOffset);
  },
};

// loadParties fills the seller and buyer pick lists from the users list,
// keeping what was picked.
async function loadParties() {
  const users = await pickSeller($("#orders-seller"));
  ordersSeller = sellerPicked;
  pickUser($("#purchase-buyer"), users, Number($("#purchase-buyer").value), ordersSeller);
}

on("#orders-form", "submit", async () => {
  sellerPicked = ordersSeller = positive($("#orders-seller").value, "seller id");
  $("#order-detail").hidden = true;
  await loadOrders(0);
});

on("#orders-seller", "change", async () => {
  sellerPicked = ordersSeller = positive($("#orders-seller").value, "seller id");
  $("#order-detail").hidden = true;
  await loadOrders(0);
});

on("#orders-status", "change", async () => { if (ordersSeller) await loadOrders(0); });

async function shipmentFlow() {
  if (!flow) {
    // A public read: it needs no token.
    const res = await api("GET", "/shipment_statuses", undefined, { token: null });
    flow = new Map(res.body.map((s) => [s.id, s]));
  }
  return flow;
}

// loadOrders shows a page of the seller's orders, newest first, with each
// order's shipment as its seller reads it, and refreshes the purchase
// form's items (a sale or a cancellation changes what they have).
async function loadOrders(offset) {
  const seller = ordersSeller;
  const q = new URLSearchParams({ seller, sort: "date_desc", offset, limit: PAGE });
  if ($("#orders-status").value) q.set("order.status", $("#orders-status").value);
  const [res] = await Promise.all([api("GET", "/operator/orders?" + q), shipmentFlow(), loadPurchaseItems(seller)]);
  const list = res.body.results;
  await Promise.all(list.map(readShipment));
  ordersOffset = offset;
  $("#orders-body").hidden = false;
  fill($("#orders-table tbody"), list.map(orderRow));
  pager($("#orders-pager"), res.body.paging, guarded((o) => loadOrders(o)));
}

// readShipment reads an order's shipment as the order's seller (the
// operator routes have no shipment read). When the read fails, the page
// keeps what it learned last and says it could not read it.
async function readShipment(o) {
  const id = o.shipping && o.shipping.id;
  if (!id) return;
  try {
    const res = await asUser(o.seller.id, "GET", `/shipments/${id}`, undefined, { headers: { "x-format-new": "true" } });
    shipments.set(id, { status: res.body.status, substatus: res.body.substatus });
  } catch (e) {
    shipments.set(id, Object.assign({}, shipments.get(id), { readError: e.message }));
  }
}

function orderRow(o) {
  const line = (o.order_items || [])[0] || { item: {}, stock: [] };
  const store = (line.stock || []).map((s) => s.store_id).join(", ");
  const actions = [];
  if (o.status === "payment_required") {
    actions.push(el("button", { type: "button", class: "order-pay", onclick: guarded(() => payOrder(o.id)) }, "Pay"));
  }
  // A shipment on its way or delivered refuses a cancellation (the sale
  // then ends through a claim), so the button is not offered.
  const shipment = (o.shipping && shipments.get(o.shipping.id)) || {};
  if (o.status !== "cancelled" && shipment.status !== "shipped" && shipment.status !== "delivered") {
    actions.push(el("button", { type: "button", class: "order-cancel", onclick: guarded(() => cancelOrder(o.id)) }, "Cancel"));
  }
  return el("tr", { dataset: { orderId: o.id } },
    el("td", {}, el("button", { type: "button", class: "order-open link", title: "Open the order and its shipment",
      onclick: guarded(() => openOrder(o.id)) }, o.id)),
    el("td", {}, stamp(o.date_created)), el("td", { class: "order-status" }, o.status),
    el("td", { class: "order-item", dataset: { itemId: line.item.id } },
      el("span", { class: "item-id" }, line.item.id), " ", el("span", { class: "item-title" }, line.item.title || "")),
    el("td", { class: "order-quantity" }, line.quantity), el("td", { class: "order-store" }, store),
    el("td", { class: "order-buyer", dataset: { buyerId: o.buyer.id } }, `${o.buyer.nickname} (${o.buyer.id})`),
    el("td", {}, `${o.total_amount} ${o.currency_id}`), el("td", {}, el("div", { class: "actions" }, actions)),
    shipmentCell(o.shipping && o.shipping.id, o.status));
}

// shipmentCell is the shipment's status above the controls that move it to
// one of the statuses allowed after it: one column, so that the table fits a
// window 1280 pixels wide. The server moves no shipment of an order that
// waits for its payment (the order is cancelled instead, which cancels the
// shipment), whatever the flow allows after pending: such a shipment is
// offered no move.
function shipmentCell(id, orderStatus) {
  if (!id) return el("td", {}, el("div", { class: "shipment-status" }, "none"));
  const sh = shipments.get(id) || {};
  const known = sh.status ? sh.status + (sh.substatus ? " / " + sh.substatus : "") : "unknown";
  const status = el("div", { class: "shipment-status", dataset: { shipmentId: id }, title: sh.readError || `shipment ${id}` },
    known, sh.readError ? el("span", { class: "hint" }, " (not read: " + sh.readError + ")") : null);
  const moves = (...children) => el("td", { class: "shipment" }, status, el("div", { class: "shipment-moves" }, ...children));
  if (orderStatus === "payment_required") return moves(el("span", { class: "hint" }, "waits for the payment"));
  const next = sh.next || (flow && flow.get(sh.status) ? flow.get(sh.status).next_statuses : []);
  if (next.length === 0) return moves(el("span", { class: "hint" }, sh.status ? "final" : ""));
  const subs = el("select", { class: "shipment-sub" });
  const pick = el("select", { class: "shipment-next", onchange: () => fillSubstatuses(subs, pick.value) },
    next.map((n) => el("option", { value: n }, n)));
  fillSubstatuses(subs, next[0]);
  return moves(pick, subs,
    el("button", { type: "button", class: "shipment-move", onclick: guarded((ev) => moveShipment(id, ev)) }, "Move"));
}

function fillSubstatuses(select, status) {
  const st = flow && flow.get(status);
  select.replaceChildren(el("option", { value: "" }, "no substatus"),
    ...(st ? st.substatuses : []).map((s) => el("option", { value: s.id }, s.id)));
}

async function moveShipment(id, ev) {
  const td = ev.target.closest("td");
  const body = { status: $(".shipment-next", td).value };
  if ($(".shipment-sub", td).value) body.substatus = $(".shipment-sub", td).value;
  const res = await api("PUT", `/operator/shipments/${id}/status`, body, { raw: true });
  if (res.status >= 400) {
    // A refused move lists the statuses the shipment may move to: offer
    // those, whatever the page thought its status was.
    const allowed = ((res.body && res.body.cause) || []).filter((c) => c && c.code === "allowed_next_status").map((c) => c.message);
    if (allowed.length) {
      shipments.set(id, Object.assign({}, shipments.get(id), { next: allowed }));
      await loadOrders(ordersOffset);
    }
    throw new APIError(res);
  }
  shipments.set(id, { status: res.body.status, substatus: res.body.substatus });
  say(`Shipment ${id} is ${res.body.status}${res.body.substatus ? " / " + res.body.substatus : ""}.`, "ok");
  await loadOrders(ordersOffset);
}

// openOrder shows an order whole (GET /operator/orders/{id}) beside its
// shipment as the seller reads it.
async function openOrder(id) {
  const res = await api("GET", `/operator/orders/${id}`);
  const o = res.body;
  const ship = o.shipping && o.shipping.id;
  $("#order-detail").hidden = false;
  $("#order-detail-id").textContent = o.id;
  $("#order-detail-order").textContent = JSON.stringify(o, null, 2);
  $("#order-detail-shipment-id").textContent = ship || "";
  if (!ship) {
    $("#order-detail-shipment").textContent = "The order has no shipment.";
    return;
  }
  const sh = await asUser(o.seller.id, "GET", `/shipments/${ship}`, undefined, { headers: { "x-format-new": "true" }, raw: true })
    .catch((e) => { if (!e.res) throw e; return e.res; });
  $("#order-detail-shipment").textContent = sh.status === 200 ? JSON.stringify(sh.body, null, 2) : describe(sh);
}

async function payOrder(id) {
  const res = await api("POST", `/operator/orders/${id}/payments`, { status: "approved" });
  say(`Order ${id} is ${res.body.status}.`, "ok");
  await loadOrders(ordersOffset);
}

async function cancelOrder(id) {
  const res = await api("POST", `/operator/orders/${id}/cancel`);
  say(`Order ${id} is ${res.body.status}.`, "ok");
  await loadOrders(ordersOffset);
}

// loadPurchaseItems fills the purchase form's items with the seller's
// active ones (only they can be bought), keeping the one picked.
async function loadPurchaseItems(seller) {
  const res = await api("GET", `/operator/items?seller_id=${seller}&limit=${PICK}`);
  const select = $("#purchase-item");
  const keep = select.value;
  const active = res.body.results.filter((it) => it.status === "active");
  select.replaceChildren(...active.map((it) => el("option", { value: it.id, dataset: { up: it.user_product_id, seller: it.seller_id } },
    `${it.id} ${it.title} (${it.available_quantity} available)`)));
  if (active.length === 0) select.append(el("option", { value: "" }, "no active item"));
  if (active.some((it) => it.id === keep)) select.value = keep;
  await loadPurchaseStores();
}

on("#purchase-item", "change", () => loadPurchaseStores());

// loadPurchaseStores offers the stores that hold the picked item's stock
// (GET /user-products/{id}/stock as the seller); a single-origin item has
// none, and "any" lets the server pick the store.
async function loadPurchaseStores() {
  const select = $("#purchase-store");
  const keep = select.value;
  const options = [el("option", { value: "" }, "any (the server picks)")];
  const item = $("#purchase-item").selectedOptions[0];
  if (item && item.value) {
    const res = await asUser(Number(item.dataset.seller), "GET", `/user-products/${item.dataset.up}/stock`);
    for (const l of res.body.locations || []) {
      if (l.store_id) options.push(el("option", { value: l.store_id }, `${l.store_id} (${l.quantity} units)`));
    }
  }
  select.replaceChildren(...options);
  if (options.some((o) => o.value === keep)) select.value = keep;
}

on("#purchase-form", "submit", async () => {
  const item = $("#purchase-item").value;
  if (!item) throw new Error("The seller has no active item to buy.");
  const body = {
    buyer_id: positive($("#purchase-buyer").value, "buyer id"), item_id: item,
    quantity: positive($("#purchase-quantity").value, "quantity"), status: $("#purchase-status").value,
  };
  if ($("#purchase-store").value) body.store_id = $("#purchase-store").value;
  const res = await api("POST", "/operator/orders", body);
  say(`Order ${res.body.id} placed: ${res.body.status}.`, "ok");
  await loadOrders(0);
});

// ---- post-sale -----------------------------------------------------------

// psOrder is the order open on the Post-sale screen.
let psOrder = null;

screens.postsale = {
  async enter() { if (psOrder) await openPostSale(psOrder.id); },
};

on("#ps-form", "submit", async () => { await openPostSale(positive($("#ps-order").value, "order id")); });

async function openPostSale(id) {
  const res = await api("GET", `/operator/orders/${id}`);
  psOrder = res.body;
  $("#ps-body").hidden = false;
  $("#ps-order-id").textContent = psOrder.id;
  $("#ps-seller").textContent = `${psOrder.seller.nickname} (${psOrder.seller.id})`;
  $("#ps-buyer").textContent = `${psOrder.buyer.nickname} (${psOrder.buyer.id})`;
  $("#ps-pack").textContent = psOrder.pack_id || "none";
  await Promise.all([loadConversation(), loadClaims()]);
}

// conversationPath is the pack's conversation (an order without a pack
// stands in its pack's place).
function conversationPath() {
  return `/messages/packs/${psOrder.pack_id || psOrder.id}/sellers/${psOrder.seller.id}`;
}

// loadConversation reads the conversation as its seller does, without
// marking anything read: reading is the seller's application's to do.
async function loadConversation() {
  const res = await asUser(psOrder.seller.id, "GET", conversationPath() + "?tag=post_sale&mark_as_read=false&limit=50");
  const c = res.body.conversation_status || {};
  $("#ps-conversation-status").textContent = c.status ? `(${c.status}${c.substatus ? " / " + c.substatus : ""})` : "";
  fill($("#ps-messages tbody"), (res.body.messages || []).map((m) => el("tr", { class: "ps-message" },
    el("td", {}, stamp(m.message_date.created)),
    el("td", { class: "ps-message-from" }, m.from.user_id === psOrder.buyer.id ? "buyer" : "seller"),
    el("td", { class: "ps-message-text" }, m.text),
    el("td", {}, m.status),
    el("td", {}, m.message_date.read ? stamp(m.message_date.read) : ""))));
}

on("#ps-message-form", "submit", async () => {
  const buyer = psOrder.buyer.id;
  await asUser(buyer, "POST", conversationPath() + "?tag=post_sale",
    { from: { user_id: buyer }, to: { user_id: psOrder.seller.id }, text: $("#ps-message-text").value });
  $("#ps-message-text").value = "";
  say("Sent as the buyer.", "ok");
  await loadConversation();
});

on("#ps-claim-form", "submit", async () => {
  const res = await api("POST", "/operator/claims", { order_id: psOrder.id, reason_id: $("#ps-claim-reason").value });
  say(`The buyer opened claim ${res.body.id}.`, "ok");
  await loadClaims();
});

// The buyer's and the mediator's moves the screen offers, as the
// operator route takes them.
const claimMoves = [
  ["complainant", "send_message_to_respondent", "buyer: write to the seller"],
  ["complainant", "open_dispute", "buyer: ask for mediation"],
  ["complainant", "accept_partial_refund", "buyer: accept the partial refund"],
  ["complainant", "reject_partial_refund", "buyer: reject the partial refund"],
  ["complainant", "close_claim", "buyer: close the claim"],
  ["mediator", "send_message_to_respondent", "mediator: write to the seller"],
  ["mediator", "resolve:complainant", "mediator: resolve for the buyer"],
  ["mediator", "resolve:respondent", "mediator: resolve for the seller"],
];

// loadClaims shows the order's claims as their seller reads them, each
// player's actions with their due dates, and the returns they led to.
async function loadClaims() {
  const res = await asUser(psOrder.seller.id, "GET", `/post-purchase/v1/claims/search?order_id=${psOrder.id}`);
  const claims = res.body.data || [];
  fill($("#ps-claims tbody"), claims.map(claimRow));
  const withReturn = claims.filter((c) => (c.related_entities || []).includes("return"));
  const returns = await Promise.all(withReturn.map((c) =>
    asUser(psOrder.seller.id, "GET", `/post-purchase/v2/claims/${c.id}/returns`).then((r) => r.body)));
  fill($("#ps-returns tbody"), returns.map(returnRow));
}

function claimRow(c) {
  const actions = [];
  for (const p of c.players || []) {
    for (const a of p.available_actions || []) {
      actions.push(el("div", { class: "ps-claim-action", dataset: { role: p.role, action: a.action } },
        `${p.role}: ${a.action}${a.mandatory ? " (mandatory)" : ""}${a.due_date ? ", due " + stamp(a.due_date) : ""}`));
    }
  }
  const pick = el("select", { class: "ps-claim-move" },
    claimMoves.map(([role, action, label]) => el("option", { value: role + " " + action }, label)));
  const text = el("input", { class: "ps-claim-text", size: 20, placeholder: "message" });
  const cell = c.status === "closed"
    ? el("span", { class: "hint" }, `closed: ${c.resolution ? c.resolution.reason : ""}`)
    : el("div", { class: "actions" }, pick, text,
      el("button", { type: "button", class: "ps-claim-act", onclick: guarded(() => actOnClaim(c.id, pick.value, text.value)) }, "Do"));
  return el("tr", { class: "ps-claim", dataset: { claimId: c.id } },
    el("td", {}, c.id), el("td", {}, c.reason_id),
    el("td", { class: "ps-claim-state" }, `${c.stage} / ${c.status}`),
    el("td", {}, actions.length ? actions : el("span", { class: "hint" }, "none")), el("td", {}, cell));
}

async function actOnClaim(id, move, message) {
  const [role, action] = move.split(" ");
  const body = { role, action };
  if (action.startsWith("send_message")) body.message = message || "Hola";
  if (action === "close_claim") body.resolution = { reason: "worked_out_with_seller" };
  if (action.startsWith("resolve:")) {
    body.action = "resolve";
    body.resolution = { reason: "rep_resolution", benefited: [action.split(":")[1]] };
  }
  const res = await api("POST", `/operator/claims/${id}/actions`, body);
  say(`Claim ${id} is ${res.body.stage} / ${res.body.status}.`, "ok");
  await loadClaims();
}

// The statuses a return may be moved to, in the order of its flow.
const returnStatuses = ["label_generated", "scheduled", "shipped", "pending_delivered", "delivered", "not_delivered",
  "return_to_buyer", "pending_cancel", "cancelled", "pending_failure", "failed", "pending_expiration", "expired"];

function returnRow(r) {
  const pick = el("select", { class: "ps-return-next" }, returnStatuses.map((st) => el("option", { value: st }, st)));
  return el("tr", { class: "ps-return", dataset: { returnId: r.id } },
    el("td", {}, r.id), el("td", {}, r.claim_id), el("td", { class: "ps-return-status" }, r.status),
    el("td", {}, r.status_money),
    el("td", {}, el("div", { class: "actions" }, pick,
      el("button", { type: "button", class: "ps-return-move", onclick: guarded(async () => {
        const res = await api("PUT", `/operator/returns/${r.id}/status`, { status: pick.value });
        say(`Return ${r.id} is ${res.body.status}.`, "ok");
        await loadClaims();
      }) }, "Move"))));
}

// ---- questions -----------------------------------------------------------

let questionsSeller = 0;

screens.questions = {
  async enter() {
    const users = await pickSeller($("#q-seller"));
    pickUser($("#q-asker"), users, Number($("#q-asker").value), sellerPicked);
    await showQuestionsOf(sellerPicked);
  },
};

async function showQuestionsOf(seller) {
  sellerPicked = questionsSeller = seller;
  if (questionsSeller) await Promise.all([loadQuestions(0), loadAskItems(questionsSeller)]);
}

// loadAskItems offers the seller's items to ask about, keeping the one
// picked; the server says why a question on an item that is not active is
// refused.
async function loadAskItems(seller) {
  const res = await api("GET", `/operator/items?seller_id=${seller}&limit=${PICK}`);
  const select = $("#q-item");
  const keep = select.value;
  const items = res.body.results;
  select.replaceChildren(...items.map((it) => el("option", { value: it.id },
    `${it.id} ${it.title}` + (it.status === "active" ? "" : ` (${it.status})`))));
  if (items.length === 0) select.append(el("option", { value: "" }, "no item"));
  if (items.some((it) => it.id === keep)) select.value = keep;
}

on("#questions-form", "submit", () => showQuestionsOf(positive($("#q-seller").value, "seller id")));
on("#q-seller", "change", () => showQuestionsOf(positive($("#q-seller").value, "seller id")));

async function loadQuestions(offset) {
  const status = $("#q-status").value;
  const q = `/questions/search?seller_id=${questionsSeller}&offset=${offset}&limit=${PAGE}` + (status ? `&status=${status}` : "");
  const res = await asUser(questionsSeller, "GET", q);
  const list = res.body.questions || [];
  fill($("#questions-table tbody"), list.map((qn) => {
    const answer = qn.answer ? `${qn.answer.text} (${qn.answer.status})` : "";
    const from = qn.from ? qn.from.id : "";
    return el("tr", { dataset: { questionId: qn.id } },
      el("td", {}, qn.id), el("td", {}, qn.item_id), el("td", {}, from), el("td", { class: "question-text" }, qn.text),
      el("td", { class: "question-status" }, qn.status), el("td", { class: "question-answer" }, answer),
      // Only an unanswered question takes an answer: the server refuses a
      // second one, so the page does not offer it.
      qn.status === "UNANSWERED" && !qn.answer
        ? el("td", { class: "wide" }, el("input", { class: "answer-text", placeholder: "Answer" }),
          el("button", { type: "button", class: "answer-send", onclick: guarded((ev) => answer_(qn.id, ev)) }, "Answer"))
        : el("td", {}),
      el("td", {}, el("select", { class: "moderate-status" }, MODERATION.map(([field, value]) =>
        el("option", { value: field + ":" + value }, (field === "status" ? "question " : "answer ") + value))),
      el("button", { type: "button", class: "moderate-send", onclick: guarded((ev) => moderate(qn.id, ev)) }, "Set")));
  }));
  pager($("#questions-pager"), { total: res.body.total || 0, offset, limit: PAGE }, guarded((o) => loadQuestions(o)));
}

async function answer_(id, ev) {
  const text = ev.target.closest("td").querySelector(".answer-text").value;
  await asUser(questionsSeller, "POST", "/answers", { question_id: id, text });
  say(`Answered question ${id}.`, "ok");
  await loadQuestions(0);
}

// MODERATION lists what the operator may set: a question's status, or its
// answer's.
const MODERATION = [["status", "UNDER_REVIEW"], ["status", "BANNED"], ["status", "DISABLED"],
  ["answer_status", "BANNED"], ["answer_status", "DISABLED"], ["answer_status", "ACTIVE"]];

async function moderate(id, ev) {
  const [field, value] = ev.target.closest("td").querySelector(".moderate-status").value.split(":");
  await api("PUT", `/operator/questions/${id}`, { [field]: value });
  say(`Question ${id}: ${field} ${value}.`, "ok");
  await loadQuestions(0);
}

on("#ask-form", "submit", async () => {
  const asker = positive($("#q-asker").value, "asker id");
  const item = $("#q-item").value;
  if (!item) throw new Error("The seller has no item to ask about.");
  const res = await asUser(asker, "POST", "/questions", { item_id: item, text: $("#q-text").value });
  say(`Question ${res.body.id} asked.`, "ok");
  $("#q-text").value = "";
  await loadQuestions(0);
});

// ---- applications --------------------------------------------------------

let openApp = null;

screens.apps = {
  async enter() {
    const owner = $("#app-owner");
    pickUser(owner, await listUsers(), Number(owner.value) || sellerPicked || selectedUser);
    await loadApps(0);
    if (openApp) await showApp(openApp);
  },
  async tick() { if (openApp) await showApp(openApp); },
};

async function loadApps(offset) {
  const res = await api("GET", `/operator/applications?offset=${offset}&limit=${PAGE}`);
  fill($("#apps-table tbody"), res.body.results.map((a) =>
    el("tr", { dataset: { appId: a.id } }, el("td", {}, a.id), el("td", {}, a.name), el("td", {}, a.owner_user_id),
      el("td", {}, a.callback_url), el("td", {}, a.topics.join(", ")),
      el("td", {}, el("button", { type: "button", class: "app-open", onclick: guarded(() => showApp(a)) }, "Deliveries")))));
  pager($("#apps-pager"), res.body.paging, guarded((o) => loadApps(o)));
}

on("#app-form", "submit", async () => {
  const res = await api("POST", "/operator/applications", {
    name: $("#app-name").value, owner_user_id: positive($("#app-owner").value, "owner id"),
    callback_url: $("#app-callback").value, topics: ["questions"],
  });
  say(`Registered application ${res.body.id}.`, "ok");
  await loadApps(0);
  await showApp(res.body);
});

function attemptCells(a) {
  return [el("td", {}, a.delivery_id), el("td", {}, a.attempt), el("td", {}, a.sent)];
}

// answered is what the receiver answered: its status, or why there was none.
function answered(a) {
  const r = a.response || {};
  return r.http_code ? String(r.http_code) : (r.error || "no answer");
}

function outcome(a) {
  return el("td", { class: "outcome outcome-" + a.outcome }, a.outcome + (a.redelivery ? " (redelivery)" : ""));
}

async function showApp(app) {
  openApp = app;
  $("#app-detail").hidden = false;
  $("#app-detail-id").textContent = `${app.id} (${app.name})`;
  const [dl, missed] = await Promise.all([
    api("GET", `/operator/applications/${app.id}/deliveries?limit=50`),
    asUser(app.owner_user_id, "GET", `/missed_feeds?app_id=${app.id}`).catch((e) => ({ body: { messages: [] }, err: e })),
  ]);
  fill($("#deliveries-table tbody"), dl.body.results.map((a) =>
    el("tr", {}, ...attemptCells(a), el("td", {}, a.resource), el("td", {}, answered(a)),
      outcome(a), el("td", {}, a.next_attempt || ""),
      el("td", {}, a.outcome === "retry" ? "" : el("button", { type: "button", class: "redeliver",
        onclick: guarded(async () => {
          await api("POST", `/operator/applications/${app.id}/deliveries/${a.delivery_id}/redeliver`);
          say(`Delivery ${a.delivery_id} sent again.`, "ok");
          await showApp(app);
        }) }, "Redeliver")))));
  fill($("#missed-table tbody"), (missed.body.messages || []).map((m) =>
    el("tr", {}, el("td", {}, m._id), el("td", {}, m.topic), el("td", {}, m.resource), el("td", {}, m.attempts), el("td", {}, m.sent))));
}

// ---- clock ---------------------------------------------------------------

screens.clock = {
  async enter() {
    await pickSeller($("#rt-user"));
    await Promise.all([recentAttempts(), responseTime()]);
  },
  async tick() { await refreshClock(); await recentAttempts(); },
};

async function recentAttempts() {
  const apps = await api("GET", "/operator/applications?limit=20");
  const lists = await Promise.all(apps.body.results.map((a) => api("GET", `/operator/applications/${a.id}/deliveries?limit=10`)));
  const all = lists.flatMap((l) => l.body.results).sort((a, b) => (a.sent < b.sent ? 1 : a.sent > b.sent ? -1 : 0)).slice(0, 20);
  fill($("#clock-deliveries tbody"), all.map((a) =>
    el("tr", {}, el("td", {}, a.application_id), ...attemptCells(a),
      el("td", {}, answered(a)), outcome(a), el("td", {}, a.next_attempt || ""))));
}

async function setClock(now) {
  const res = await api("PUT", "/operator/clock", { now });
  say(`The clock is now ${seconds(res.body.now)}.`, "ok");
  await refreshClock();
  await recentAttempts();
}

for (const b of $$(".clock-advance")) {
  b.addEventListener("click", guarded(async () => {
    const res = await refreshClock();
    if (res.status !== 200) throw new APIError(res);
    const next = new Date(Date.parse(res.body.now) + Number(b.dataset.seconds) * 1000);
    await setClock(next.toISOString());
  }));
}

on("#clock-form", "submit", async () => { await setClock($("#clock-set-input").value.trim()); });

// responseTime shows the picked seller's response time as the seller reads
// it.
async function responseTime() {
  const id = Number($("#rt-user").value);
  if (!id) return;
  sellerPicked = id;
  // Before the first daily refresh that counts the seller, the server
  // answers 404: that is what there is to see, not an error of the page.
  const res = await asUser(id, "GET", `/users/${id}/questions/response_time`)
    .catch((e) => { if (!e.res) throw e; return e.res; });
  $("#rt-out").textContent = res.status === 200 ? JSON.stringify(res.body, null, 2) : describe(res);
}

on("#rt-form", "submit", () => responseTime());
on("#rt-user", "change", () => responseTime());

// ---- faults --------------------------------------------------------------

screens.faults = { enter: () => loadFaults() };

async function loadFaults() {
  const res = await api("GET", "/operator/faults");
  fill($("#faults-table tbody"), res.body.results.map((f) =>
    el("tr", {}, el("td", {}, f.id), el("td", {}, f.method || "any"), el("td", {}, f.route || "any"),
      el("td", {}, f.user_id || ""), el("td", {}, f.status || ""), el("td", {}, f.latency_ms || ""),
      el("td", {}, f.times === null || f.times === undefined ? "∞" : f.times),
      el("td", {}, el("button", { type: "button", class: "fault-delete", onclick: guarded(async () => {
        await api("DELETE", `/operator/faults/${f.id}`);
        await loadFaults();
      }) }, "Remove")))));
}

on("#fault-form", "submit", async () => {
  const rule = {};
  if ($("#fault-method").value) rule.method = $("#fault-method").value;
  if ($("#fault-route").value.trim()) rule.route = $("#fault-route").value.trim();
  if ($("#fault-status").value.trim()) rule.status = Number($("#fault-status").value);
  if ($("#fault-latency").value.trim()) rule.latency_ms = Number($("#fault-latency").value);
  if ($("#fault-times").value.trim()) rule.times = Number($("#fault-times").value);
  const res = await api("POST", "/operator/faults", rule);
  say(`Added fault rule ${res.body.id}.`, "ok");
  await loadFaults();
});

on("#faults-clear", "click", async () => {
  const res = await api("DELETE", "/operator/faults");
  say(`Removed ${res.body.deleted} rules.`, "ok");
  await loadFaults();
});

// ---- journal -------------------------------------------------------------

screens.journal = { enter: () => loadJournal(0) };

async function loadJournal(offset) {
  const q = new URLSearchParams({ offset, limit: PAGE });
  if ($("#journal-route").value.trim()) q.set("route", $("#journal-route").value.trim());
  if ($("#journal-status").value.trim()) q.set("status", $("#journal-status").value.trim());
  const res = await api("GET", "/operator/requests?" + q);
  fill($("#journal-table tbody"), res.body.results.map((j) =>
    el("tr", {}, el("td", {}, j.id), el("td", {}, j.time), el("td", {}, j.method),
      el("td", {}, j.path + (j.query ? "?" + j.query : "")), el("td", {}, j.route), el("td", {}, j.status),
      el("td", {}, j.latency_ms), el("td", {}, j.user_id || ""), el("td", {}, j.fault_id || ""))));
  pager($("#journal-pager"), res.body.paging, guarded((o) => loadJournal(o)));
}

on("#journal-form", "submit", () => loadJournal(0));
on("#journal-clear", "click", async () => {
  const res = await api("DELETE", "/operator/requests");
  say(`Cleared ${res.body.deleted} requests.`, "ok");
  await loadJournal(0);
});

// ---- snapshots and reset -------------------------------------------------

screens.state = { enter: () => loadSnapshots() };

async function loadSnapshots() {
  const res = await api("GET", "/operator/snapshots");
  fill($("#snapshots-table tbody"), res.body.map((s) =>
    el("tr", {}, el("td", {}, s.id), el("td", {}, s.name), el("td", {}, s.created),
      el("td", {},
        el("button", { type: "button", class: "snapshot-restore", onclick: guarded(async () => {
          await api("POST", `/operator/snapshots/${s.id}/restore`);
          forgetUserTokens();
          say(`Restored snapshot ${s.id}.`, "ok");
        }) }, "Restore"), " ",
        el("button", { type: "button", class: "snapshot-delete", onclick: guarded(async () => {
          await api("DELETE", `/operator/snapshots/${s.id}`);
          await loadSnapshots();
        }) }, "Delete")))));
}

on("#snapshot-form", "submit", async () => {
  const res = await api("POST", "/operator/snapshots", { name: $("#snapshot-name").value });
  say(`Took snapshot ${res.body.id}.`, "ok");
  await loadSnapshots();
});

on("#reset-button", "click", async () => {
  await api("POST", "/operator/reset" + ($("#reset-demo").checked ? "?demo=true" : ""));
  forgetUserTokens();
  selectedUser = itemsSeller = questionsSeller = ordersSeller = sellerPicked = 0;
  shipments.clear();
  openApp = null;
  say("The server is reset.", "ok");
});

route();
