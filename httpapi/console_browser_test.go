package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/marketplacetest"
	"github.com/marketplace/marketplace/money"
	"github.com/marketplace/marketplace/questions"
	"github.com/marketplace/marketplace/sales"
	"github.com/marketplace/marketplace/stock"
)

// TestConsole_InChromium drives the operator console in a real headless
// browser through an operator's day: sign in, create a seller with a store,
// register the seller's application, publish an item, change its stock, see
// a stale edit refused with 409, ask, answer and moderate a question, move the
// clock to see a failed notification retried and acknowledged, then sell the
// item's units through the orders screen (pay, cancel, ship) and see it
// paused for lack of stock.
//
// With CONSOLE_SCREENSHOTS=dir it also saves a PNG of each main screen in
// dir (docs/console holds the ones the documentation shows).
func TestConsole_InChromium(t *testing.T) {
	// The receiver refuses the first notification and acknowledges the
	// rest, so that the first delivery needs a retry.
	var posts atomic.Int32
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if posts.Add(1) == 1 {
			http.Error(w, "not yet", http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(receiver.Close)
	srv := marketplacetest.NewServer(t)
	p := openConsole(t, srv)
	ctx, b := p.ctx, p.b
	step, text, until, shot, settled, nav, choose := p.step, p.text, p.until, p.shot, p.settled(), p.nav, p.choose
	shots := os.Getenv("CONSOLE_SCREENSHOTS")

	step("sign in",
		chromedp.Navigate(srv.URL+"/console"),
		chromedp.WaitVisible("#token"),
		chromedp.SendKeys("#token", srv.OperatorToken),
		chromedp.Click("#signin-button"),
		chromedp.WaitVisible("#user-nickname"),
		until(`document.querySelectorAll("#users-table tbody tr[data-user-id]").length >= 2`),
	)

	step("create a seller",
		chromedp.SendKeys("#user-nickname", "CONSOLE_SELLER"),
		chromedp.SetValue("#user-tags", "normal, warehouse_management"),
		chromedp.Click("#user-create"),
		until(`document.querySelector("#detail-nickname").textContent === "CONSOLE_SELLER"`),
	)
	sellerID, err := strconv.ParseInt(text("#detail-id"), 10, 64)
	if err != nil {
		t.Fatalf("seller id: %v", err)
	}
	step("create the seller's store",
		chromedp.Click("#store-create"),
		until(`document.querySelector("#stores-table tbody tr[data-store-id]")`),
	)
	stores, _, err := srv.Marketplace.Accounts.UserStores(ctx, sellerID, accounts.StoreQuery{Limit: 10})
	if err != nil || len(stores) != 1 || stores[0].Tags[0] != "stock_location" {
		t.Fatalf("the seller's stores: %v, %+v", err, stores)
	}
	shot("users")

	step("register the seller's application",
		nav("apps"),
		choose("#app-owner", strconv.FormatInt(sellerID, 10)),
		chromedp.SetValue("#app-callback", receiver.URL+"/notifications"),
		chromedp.Click("#app-create"),
		until(`document.querySelector("#apps-table tbody tr[data-app-id]")`),
	)

	step("publish an item",
		nav("items"),
		chromedp.WaitVisible("#items-seller"),
		chromedp.Click("#items-load"),
		settled,
		chromedp.WaitVisible(".publish-qty"),
		chromedp.SetValue(".publish-qty", "5"),
		chromedp.SendKeys("#item-title", "Console mug"),
		chromedp.Click("#item-publish"),
		until(`document.querySelector("#items-table tbody tr[data-item-id]")`),
	)
	itemID, err := chromedp.Run(b, chromedp.Evaluate[string](`document.querySelector("#items-table tbody tr[data-item-id]").dataset.itemId`))
	if err != nil {
		t.Fatal(err)
	}
	item, err := srv.Marketplace.Stock.Item(ctx, itemID)
	if err != nil || item.SellerID != sellerID || item.AvailableQuantity != 5 || item.Title != "Console mug" {
		t.Fatalf("published item: %v, %+v", err, item)
	}

	step("change its stock",
		chromedp.Click(".stock-open"),
		settled,
		chromedp.WaitVisible(".stock-qty"),
		chromedp.SetValue(".stock-qty", "7"),
		chromedp.Click("#stock-save"),
		until(`document.querySelector("#stock-result").textContent.startsWith("Saved")`),
		until(`document.querySelector("#items-table td.available").textContent === "7"`),
	)
	if item, _ = srv.Marketplace.Stock.Item(ctx, itemID); item.AvailableQuantity != 7 {
		t.Fatalf("after the edit the item has %d", item.AvailableQuantity)
	}

	// Another client changes the stock after the page read its version.
	version, err := strconv.ParseInt(text("#stock-version"), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Marketplace.Stock.PutStock(ctx, sellerID, item.UserProductID, version,
		[]stock.StockLocation{{StoreID: stores[0].ID, Quantity: 3}}); err != nil {
		t.Fatalf("change the stock behind the page: %v", err)
	}
	step("a stale edit is refused",
		chromedp.SetValue(".stock-qty", "9"),
		chromedp.Click("#stock-save"),
		until(`document.querySelector("#stock-result").textContent.includes("409")`),
	)
	if got := text("#stock-result"); got != fmt.Sprintf("Refused: 409 conflict: Version mismatch. Someone changed the stock after version %d was read; read it again.", version) {
		t.Fatalf("stock result %q", got)
	}
	if item, _ = srv.Marketplace.Stock.Item(ctx, itemID); item.AvailableQuantity != 3 {
		t.Fatalf("the refused edit changed the stock: %d", item.AvailableQuantity)
	}
	shot("items")

	step("ask a question as the buyer",
		nav("questions"),
		choose("#q-item", itemID),
		choose("#q-asker", strconv.FormatInt(srv.Buyer.ID, 10)),
		chromedp.SetValue("#q-text", "Does it fit a large coffee?"),
		chromedp.Click("#q-ask"),
		until(`document.querySelector("#questions-table .question-status")?.textContent === "UNANSWERED"`),
	)

	// The question's notification fails once; its retry is due only when
	// the clock moves.
	step("see the failed delivery",
		nav("clock"),
		until(`[...document.querySelectorAll("#clock-deliveries td.outcome")].some(td => td.textContent === "retry")`),
	)
	step("move the clock and see the retry acknowledged",
		chromedp.Click(`.clock-advance[data-seconds="60"]`),
		until(`[...document.querySelectorAll("#clock-deliveries tbody tr")].some(tr =>
			tr.children[2].textContent === "2" && tr.querySelector("td.outcome").textContent === "acknowledged")`),
	)
	if want := marketplacetest.DefaultStart.Add(time.Minute); !srv.Clock.Now().Equal(want) {
		t.Fatalf("clock %v, want %v", srv.Clock.Now(), want)
	}
	shot("clock")

	step("answer as the seller",
		nav("questions"),
		chromedp.Click("#q-load"),
		settled,
		chromedp.SendKeys(".answer-text", "Yes, 400 ml."),
		chromedp.Click(".answer-send"),
		until(`document.querySelector("#questions-table .question-status")?.textContent === "ANSWERED"`),
	)
	if got := text("#questions-table .question-answer"); got != "Yes, 400 ml. (ACTIVE)" {
		t.Fatalf("answer shown %q", got)
	}
	if n := p.count("#questions-table .answer-text"); n != 0 {
		t.Fatalf("the answered question still offers %d answer boxes", n)
	}
	shot("questions")
	step("moderate the question",
		chromedp.SetValue(".moderate-status", "status:UNDER_REVIEW"),
		chromedp.Click(".moderate-send"),
		until(`document.querySelector("#questions-table .question-status")?.textContent === "UNDER_REVIEW"`),
	)

	// Orders: sell the item's three units through the purchase form, pay,
	// cancel and ship, and see the item paused once its last unit sells.
	orderIDs := func() []string {
		t.Helper()
		ids, err := chromedp.Run(b, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#orders-table tbody tr[data-order-id]")].map(tr => tr.dataset.orderId)`))
		if err != nil {
			t.Fatalf("browser: order ids: %v", err)
		}
		return ids
	}
	// buy fills the purchase form, sends it and answers the new order's id.
	buy := func(quantity, storeID, status string) int64 {
		t.Helper()
		before := len(orderIDs())
		step("buy "+quantity+" as "+status,
			choose("#purchase-buyer", strconv.FormatInt(srv.Buyer.ID, 10)),
			choose("#purchase-item", itemID),
			settled,
			choose("#purchase-store", storeID),
			chromedp.SetValue("#purchase-quantity", quantity),
			choose("#purchase-status", status),
			chromedp.Click("#purchase-create"),
			until(fmt.Sprintf(`document.querySelectorAll("#orders-table tbody tr[data-order-id]").length === %d`, before+1)),
			settled,
		)
		msg := text("#message")
		var id int64
		if _, err := fmt.Sscanf(msg, "Order %d placed", &id); err != nil {
			t.Fatalf("after the purchase the page says %q", msg)
		}
		return id
	}
	row := func(id int64, sel string) string {
		return fmt.Sprintf(`#orders-table tr[data-order-id="%d"] %s`, id, sel)
	}
	rowText := func(id int64, sel string) string { t.Helper(); return text(row(id, sel)) }
	order := func(id int64) sales.Order {
		t.Helper()
		o, err := srv.Marketplace.Sales.Order(ctx, sales.Operator, id)
		if err != nil {
			t.Fatalf("order %d: %v", id, err)
		}
		return o
	}
	storeID := stores[0].ID

	step("open the seller's orders",
		nav("orders"),
		choose("#orders-seller", strconv.FormatInt(sellerID, 10)),
		settled,
		chromedp.WaitVisible("#orders-table"),
	)
	paid := buy("1", storeID, "paid")
	if got := rowText(paid, ".order-status"); got != "paid" {
		t.Fatalf("the paid order shows status %q", got)
	}
	if got := rowText(paid, ".order-store"); got != storeID {
		t.Fatalf("the paid order shows store %q, want %q", got, storeID)
	}
	if got := rowText(paid, ".order-buyer"); got != fmt.Sprintf("%s (%d)", srv.Buyer.Nickname, srv.Buyer.ID) {
		t.Fatalf("the paid order shows buyer %q", got)
	}
	if o := order(paid); o.Status != sales.StatusPaid || o.Buyer.ID != srv.Buyer.ID || o.OrderItems[0].Quantity != 1 ||
		len(o.OrderItems[0].Stock) != 1 || o.OrderItems[0].Stock[0].StoreID != storeID {
		t.Fatalf("the paid order in the engine: %+v", o)
	}

	unpaid := buy("1", "", "payment_required")
	if got := rowText(unpaid, ".order-status"); got != "payment_required" {
		t.Fatalf("the unpaid order shows status %q", got)
	}
	step("cancel the unpaid order",
		chromedp.Click(row(unpaid, ".order-cancel")),
		until(fmt.Sprintf(`document.querySelector(%q)?.textContent === "cancelled"`, row(unpaid, ".order-status"))),
		settled,
	)
	if o := order(unpaid); o.Status != sales.StatusCancelled {
		t.Fatalf("the cancelled order in the engine is %s", o.Status)
	}
	if n, err := chromedp.Run(b, chromedp.Evaluate[int](fmt.Sprintf(`document.querySelectorAll(%q).length`, row(unpaid, ":is(.order-pay, .order-cancel)")))); err != nil || n != 0 {
		t.Fatalf("a cancelled order offers %d payments or cancellations (%v)", n, err)
	}

	last := buy("2", storeID, "payment_required")
	if got := rowText(last, ".order-store"); got != "" {
		t.Fatalf("an unpaid order shows store %q before its units are taken", got)
	}
	step("pay the order of the last units",
		chromedp.Click(row(last, ".order-pay")),
		until(fmt.Sprintf(`document.querySelector(%q)?.textContent === "paid"`, row(last, ".order-status"))),
		settled,
	)
	if got := rowText(last, ".order-store"); got != storeID {
		t.Fatalf("the paid order shows store %q, want %q", got, storeID)
	}
	if item, _ = srv.Marketplace.Stock.Item(ctx, itemID); item.Status != "paused" || !slices.Equal(item.SubStatus, []string{"out_of_stock"}) || item.SoldQuantity != 3 {
		t.Fatalf("the item after its last unit sold: %s %v, sold %d", item.Status, item.SubStatus, item.SoldQuantity)
	}
	if offered, _ := chromedp.Run(b, chromedp.Evaluate[bool](fmt.Sprintf(`!!document.querySelector('#purchase-item option[value=%q]')`, itemID))); offered {
		t.Fatalf("the purchase form still offers the paused item")
	}

	// The paid order's shipment goes ready_to_ship -> shipped -> delivered,
	// each move picked from the statuses its current one allows.
	ship := order(paid).Shipping.ID
	if ship == nil {
		t.Fatal("the paid order has no shipment")
	}
	if got := rowText(paid, ".shipment-status"); !strings.HasPrefix(got, "ready_to_ship") {
		t.Fatalf("the paid order's shipment shows %q", got)
	}
	for _, next := range []string{"shipped", "delivered"} {
		step("move the shipment to "+next,
			choose(row(paid, ".shipment-next"), next),
			chromedp.Click(row(paid, ".shipment-move")),
			until(fmt.Sprintf(`document.querySelector(%q)?.textContent.startsWith(%q)`, row(paid, ".shipment-status"), next)),
			settled,
		)
	}
	if n, err := chromedp.Run(b, chromedp.Evaluate[int](fmt.Sprintf(`document.querySelectorAll(%q).length`, row(paid, ".shipment-move")))); err != nil || n != 0 {
		t.Fatalf("a delivered shipment offers %d moves (%v)", n, err)
	}
	if sh, err := srv.Marketplace.Sales.Shipment(ctx, sales.Operator, *ship); err != nil || sh.Status != "delivered" {
		t.Fatalf("the shipment in the engine: %v, %+v", err, sh)
	}
	step("open the paid order with its shipment",
		chromedp.Click(row(paid, ".order-open")),
		until(`document.querySelector("#order-detail-shipment").textContent.includes('"status": "delivered"')`),
		settled,
	)
	if got, want := text("#order-detail-id"), strconv.FormatInt(paid, 10); got != want {
		t.Fatalf("the order opened is %q, want %s", got, want)
	}
	if got, want := text("#order-detail-shipment-id"), strconv.FormatInt(*ship, 10); got != want {
		t.Fatalf("the order opened shows shipment %q, want %s", got, want)
	}

	// Another client ships the last order behind the page: the move the
	// page still offers is refused, the refusal is shown with the allowed
	// next statuses, and those are what the page offers next.
	lastShip := order(last).Shipping.ID
	if lastShip == nil {
		t.Fatal("the last order has no shipment")
	}
	if _, err := srv.Marketplace.Sales.MoveShipment(ctx, *lastShip, sales.ShipmentMove{Status: "shipped"}); err != nil {
		t.Fatalf("ship behind the page: %v", err)
	}
	step("a stale shipment move is refused",
		choose(row(last, ".shipment-next"), "cancelled"),
		chromedp.Click(row(last, ".shipment-move")),
		until(`document.querySelector("#message").textContent.includes("cannot move")`),
		settled,
	)
	if got, want := text("#message"), fmt.Sprintf("400 bad_request: Shipment %d cannot move from shipped to cancelled (allowed_next_status: delivered, not_delivered)", *lastShip); got != want {
		t.Fatalf("the refused move says %q, want %q", got, want)
	}
	offered, err := chromedp.Run(b, chromedp.Evaluate[[]string](fmt.Sprintf(`[...document.querySelector(%q).options].map(o => o.value)`, row(last, ".shipment-next"))))
	if err != nil || !slices.Equal(offered, []string{"delivered", "not_delivered"}) {
		t.Fatalf("after the refusal the page offers %v (%v)", offered, err)
	}
	shot("orders")

	step("see the item paused for lack of stock",
		nav("items"),
		chromedp.Click("#items-load"),
		until(fmt.Sprintf(`document.querySelector('#items-table tr[data-item-id=%q] td.item-status')?.textContent === "paused (out_of_stock)"`, itemID)),
		settled,
	)
	if got := text(fmt.Sprintf(`#items-table tr[data-item-id=%q] td.sold`, itemID)); got != "3" {
		t.Fatalf("the items screen shows %q sold", got)
	}

	if shots != "" {
		step("deliveries", nav("apps"), chromedp.Click(".app-open"),
			until(`document.querySelectorAll("#deliveries-table tbody tr td.outcome").length >= 2`))
		shot("applications")
		step("journal", nav("journal"), until(`document.querySelectorAll("#journal-table tbody tr").length >= 3`))
		shot("journal")
		step("faults", nav("faults"), chromedp.SetValue("#fault-route", "/questions"), chromedp.SetValue("#fault-times", "2"),
			chromedp.Click("#fault-create"), until(`document.querySelectorAll("#faults-table tbody tr").length === 1`))
		shot("faults")
		step("snapshots", nav("state"), chromedp.SetValue("#snapshot-name", "after the walk-through"), chromedp.Click("#snapshot-create"),
			until(`[...document.querySelectorAll("#snapshots-table tbody td")].some(td => td.textContent === "after the walk-through")`))
		shot("snapshots")
	}
}

// consolePage is the console open in a fresh headless chromium at 1280 by
// 800 pixels, the size of the documentation's screenshots.
type consolePage struct {
	t   *testing.T
	srv *marketplacetest.Server
	ctx context.Context
	b   context.Context
}

func openConsole(t *testing.T, srv *marketplacetest.Server) *consolePage {
	t.Helper()
	p := newConsolePage(t, srv)
	p.step("open the console", chromedp.Navigate(srv.URL+"/console"), chromedp.WaitVisible("#token"))
	return p
}

// newConsolePage is a fresh headless chromium at 1280 by 800 pixels on a
// blank page.
func newConsolePage(t *testing.T, srv *marketplacetest.Server) *consolePage {
	t.Helper()
	browser := chromiumPath(t)
	// A bound for a browser that hangs, not a timing the test relies on.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(browser),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("no-first-run", true),
		chromedp.WindowSize(1280, 800),
		chromedp.UserDataDir(t.TempDir()),
	)
	t.Cleanup(cancelAlloc)
	b, cancelBrowser := chromedp.NewContext(actx)
	t.Cleanup(cancelBrowser)
	p := &consolePage{t: t, srv: srv, ctx: ctx, b: b}
	p.step("set the viewport", chromedp.EmulateViewport(1280, 800))
	return p
}

func (p *consolePage) step(what string, actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	if err := chromedp.Do(p.b, actions...); err != nil {
		msg, _ := chromedp.Run(p.b, chromedp.Evaluate[string](`document.querySelector("#message").textContent`))
		p.t.Fatalf("browser: %s: %v (the page says %q)", what, err, msg)
	}
}

func (p *consolePage) text(sel string) string {
	p.t.Helper()
	s, err := chromedp.Run(p.b, chromedp.Text(sel))
	if err != nil {
		p.t.Fatalf("browser: text of %s: %v", sel, err)
	}
	return s
}

func (p *consolePage) count(sel string) int {
	p.t.Helper()
	n, err := chromedp.Run(p.b, chromedp.Evaluate[int](fmt.Sprintf(`document.querySelectorAll(%q).length`, sel)))
	if err != nil {
		p.t.Fatalf("browser: count of %s: %v", sel, err)
	}
	return n
}

// value is the value of a form field.
func (p *consolePage) value(sel string) string {
	p.t.Helper()
	v, err := chromedp.Run(p.b, chromedp.Evaluate[string](fmt.Sprintf(`document.querySelector(%q).value`, sel)))
	if err != nil {
		p.t.Fatalf("browser: value of %s: %v", sel, err)
	}
	return v
}

// until waits for a predicate of the page; the page's own timers do the
// polling, so the test only waits, it never times a pass.
func (p *consolePage) until(js string) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](js, chromedp.WithPollingTimeout(time.Minute))
}

// settled waits until the page has no request in flight, so that a table
// is not rendered again under the keys the test types into it.
func (p *consolePage) settled() chromedp.Action[chromedp.Void] {
	return p.until(`document.body.dataset.pending === "0"`)
}

func (p *consolePage) nav(screen string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(chromedp.Click(`nav button[data-screen="`+screen+`"]`), p.settled())
}

// choose picks a value of a select as a person would, change event and
// all, once the page offers it.
func (p *consolePage) choose(sel, value string) chromedp.Action[chromedp.Void] {
	return p.until(fmt.Sprintf(`(() => {
		const s = document.querySelector(%q);
		if (!s || ![...s.options].some(o => o.value === %q)) return false;
		s.value = %q;
		s.dispatchEvent(new Event("change"));
		return true;
	})()`, sel, value, value))
}

func (p *consolePage) signIn() {
	p.t.Helper()
	p.step("sign in",
		chromedp.SendKeys("#token", p.srv.OperatorToken),
		chromedp.Click("#signin-button"),
		chromedp.WaitVisible("#user-nickname"),
		p.settled(),
	)
}

// shot saves the window (1280 by 800) as dir/name.png when
// CONSOLE_SCREENSHOTS=dir is set, and does nothing otherwise, so that a
// test run never changes the tree.
func (p *consolePage) shot(name string) {
	p.t.Helper()
	dir := os.Getenv("CONSOLE_SCREENSHOTS")
	if dir == "" {
		return
	}
	png, err := chromedp.Run(p.b, chromedp.CaptureScreenshot())
	if err != nil {
		p.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		p.t.Fatal(err)
	}
}

// visible is a predicate of the page: sel is laid out (the hidden
// attribute, or a display of none, lays out nothing).
func visible(sel string) string {
	return fmt.Sprintf(`document.querySelector(%q).getClientRects().length > 0`, sel)
}

func (p *consolePage) is(js string) bool {
	p.t.Helper()
	v, err := chromedp.Run(p.b, chromedp.Evaluate[bool](js))
	if err != nil {
		p.t.Fatalf("browser: %s: %v", js, err)
	}
	return v
}

func TestConsole_SignedOutShowsNeitherTheTabsNorSignOut(t *testing.T) {
	p := openConsole(t, marketplacetest.NewServer(t))
	if p.is(visible("#nav")) || p.is(visible("#signout")) {
		t.Fatal("signed out, the page shows the tabs or Sign out")
	}
	p.shot("signin")
	p.signIn()
	if !p.is(visible("#nav")) || !p.is(visible("#signout")) {
		t.Fatal("signed in, the page hides the tabs or Sign out")
	}
	p.step("sign out", chromedp.Click("#signout"), chromedp.WaitVisible("#token"))
	if p.is(visible("#nav")) || p.is(visible("#signout")) {
		t.Fatal("after signing out, the page shows the tabs or Sign out")
	}
}

func TestConsole_HeaderIsOneLineAt1280PixelsWide(t *testing.T) {
	srv := marketplacetest.NewServer(t)
	// The longest clock text: an offset rather than Z.
	if err := srv.Clock.Set(time.Date(2026, 12, 31, 23, 59, 59, 999999999, time.FixedZone("", -3*3600))); err != nil {
		t.Fatal(err)
	}
	p := openConsole(t, srv)
	p.signIn()
	if w, _ := chromedp.Run(p.b, chromedp.Evaluate[int](`window.innerWidth`)); w != 1280 {
		t.Fatalf("the window is %d pixels wide", w)
	}
	// One line: every part of the header overlaps every other vertically,
	// and the header is less than two of its tallest parts high.
	for _, screen := range []string{"users", "state"} {
		p.step("open "+screen, p.nav(screen))
		var got struct {
			Parts, Header, Tallest float64
			OneLine                bool
		}
		r, err := chromedp.Run(p.b, chromedp.Evaluate[map[string]any](`(() => {
			const parts = [...document.querySelectorAll("header h1, nav button, #session > *")].map(e => e.getBoundingClientRect());
			const top = Math.max(...parts.map(r => r.top)), bottom = Math.min(...parts.map(r => r.bottom));
			return { parts: parts.length, header: document.querySelector("header").getBoundingClientRect().height,
				tallest: Math.max(...parts.map(r => r.height)), oneLine: top < bottom };
		})()`))
		if err != nil {
			t.Fatal(err)
		}
		got.Parts, got.Header, got.Tallest, got.OneLine = r["parts"].(float64), r["header"].(float64), r["tallest"].(float64), r["oneLine"].(bool)
		if got.Parts != 13 || !got.OneLine || got.Header >= 2*got.Tallest {
			t.Fatalf("on %s the header wraps: %+v", screen, got)
		}
	}
}

func TestConsole_ClockIsShownToTheSecond(t *testing.T) {
	srv := marketplacetest.NewServer(t)
	if err := srv.Clock.Set(time.Date(2026, 3, 4, 15, 0, 7, 123456789, time.UTC)); err != nil {
		t.Fatal(err)
	}
	p := openConsole(t, srv)
	p.signIn()
	p.step("open the clock", p.nav("clock"), p.until(`document.querySelector("#clock-value").textContent !== "…"`))
	for _, sel := range []string{"#clock-now", "#clock-value"} {
		if got := p.text(sel); got != "2026-03-04T15:00:07Z" {
			t.Errorf("%s shows %q", sel, got)
		}
	}
}

// seedQuestions publishes an item of srv.Seller and has srv.Buyer ask two
// questions about it, the second answered; it answers the item's id and
// the two questions' ids.
func seedQuestions(t *testing.T, srv *marketplacetest.Server) (item string, open, answered int64) {
	t.Helper()
	ctx := context.Background()
	p, err := srv.Marketplace.Stock.PublishMultiOrigin(ctx, srv.Seller.ID, stock.NewItem{Title: "Picked mug", CategoryID: "MLA1055",
		Price: money.FromInt(1500), ListingTypeID: "gold_special", CurrencyID: "ARS", Condition: "new", Channels: []string{"marketplace"},
		StockLocations: []stock.StockLocation{{StoreID: srv.Seller.Stores[0].ID, Quantity: 4}}})
	if err != nil {
		t.Fatalf("publish: %v", err)
	}
	ids := make([]int64, 2)
	for i, text := range []string{"Is it red?", "Is it blue?"} {
		q, err := srv.Marketplace.Questions.Ask(ctx, srv.Buyer.ID, questions.AskInput{ItemID: p.ID, Text: text})
		if err != nil {
			t.Fatalf("ask: %v", err)
		}
		ids[i] = q.ID
	}
	if _, err := srv.Marketplace.Questions.Answer(ctx, srv.Seller.ID, questions.AnswerInput{QuestionID: ids[1], Text: "No, green."}); err != nil {
		t.Fatalf("answer: %v", err)
	}
	return p.ID, ids[0], ids[1]
}

func TestConsole_ItemsQuestionsAndResponseTimeOpenOnTheFirstSellerWithoutAnId(t *testing.T) {
	srv := marketplacetest.NewServer(t)
	item, open, _ := seedQuestions(t, srv)
	seller := strconv.FormatInt(srv.Seller.ID, 10)
	p := openConsole(t, srv)
	p.signIn()

	p.step("open the items", p.nav("items"),
		p.until(fmt.Sprintf(`!!document.querySelector('#items-table tr[data-item-id=%q]')`, item)))
	if got := p.value("#items-seller"); got != seller {
		t.Fatalf("the items screen opens on seller %s, want the first user %s", got, seller)
	}

	p.step("open the questions", p.nav("questions"),
		p.until(fmt.Sprintf(`!!document.querySelector('#questions-table tr[data-question-id="%d"]')`, open)))
	if got := p.value("#q-seller"); got != seller {
		t.Fatalf("the questions screen opens on seller %s", got)
	}
	if got := p.value("#q-item"); got != item {
		t.Fatalf("the ask form offers item %q, want the seller's %s", got, item)
	}
	if got := p.value("#q-asker"); got != strconv.FormatInt(srv.Buyer.ID, 10) {
		t.Fatalf("the ask form asks as %s, want a user other than the seller", got)
	}

	p.step("open the clock", p.nav("clock"), p.until(`document.querySelector("#rt-out").textContent !== ""`))
	if got, want := p.text("#rt-out"), "404 not_found: Response time not found for user id: "+seller; got != want {
		t.Fatalf("before the daily refresh the response time shows %q, want %q", got, want)
	}
	if err := srv.Marketplace.ResponseTimes.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	p.step("show the response time again", chromedp.Click("#rt-load"), p.until(`document.querySelector("#rt-out").textContent.startsWith("{")`))
	if got := p.value("#rt-user"); got != seller {
		t.Fatalf("the response time opens on seller %s", got)
	}
	if got := p.text("#rt-out"); !strings.Contains(got, `"user_id": `+seller) {
		t.Fatalf("the response time shown is %q", got)
	}
}

func TestConsole_AnsweredQuestionOffersNoAnswerBox(t *testing.T) {
	srv := marketplacetest.NewServer(t)
	_, open, answered := seedQuestions(t, srv)
	p := openConsole(t, srv)
	p.signIn()
	p.step("open the questions", p.nav("questions"),
		p.until(fmt.Sprintf(`!!document.querySelector('#questions-table tr[data-question-id="%d"]')`, answered)))
	row := func(id int64) string { return fmt.Sprintf(`#questions-table tr[data-question-id="%d"]`, id) }
	if n := p.count(row(answered) + " .answer-text"); n != 0 {
		t.Fatalf("the answered question offers %d answer boxes", n)
	}
	if n := p.count(row(open) + " .answer-text"); n != 1 {
		t.Fatalf("the unanswered question offers %d answer boxes", n)
	}
}

// A headless browser or a script cannot type into the sign-in form: the
// token in the address's fragment signs in, and the page drops it from the
// address at once, so that it stays in no history entry.
func TestConsole_TokenInTheAddressSignsInAndLeavesNoTraceInTheAddressOrHistory(t *testing.T) {
	srv := marketplacetest.NewServer(t)
	p := newConsolePage(t, srv)
	p.step("open the console with the token",
		chromedp.Navigate(srv.URL+"/console#token="+url.QueryEscape(srv.OperatorToken)),
		p.until(visible("#user-nickname")),
		p.settled(),
	)
	if !p.is(visible("#nav")) || p.is(visible("#screen-signin")) {
		t.Fatal("the token in the address did not sign in")
	}
	p.noTokenInHistory(srv.OperatorToken)
	if got := p.text("#message"); got != "Signed in." {
		t.Fatalf("the page says %q", got)
	}

	// A wrong token is refused as the form refuses it, and dropped too.
	q := newConsolePage(t, srv)
	q.step("open the console with a wrong token",
		chromedp.Navigate(srv.URL+"/console#token=not-the-operator-token"),
		q.until(`document.querySelector("#message").textContent.startsWith("401")`),
		q.settled(),
	)
	if !q.is(visible("#token")) || q.is(visible("#nav")) {
		t.Fatal("a wrong token in the address left the sign-in screen")
	}
	q.noTokenInHistory("not-the-operator-token")

	// A page already open takes a token given to its address too.
	q.step("give the open page the token",
		chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`location.hash = "token=" + %q`, srv.OperatorToken)),
		q.until(visible("#user-nickname")),
		q.settled(),
	)
	q.noTokenInHistory(srv.OperatorToken)
}

// noTokenInHistory fails when token is in the address or in any entry of
// the tab's history.
func (p *consolePage) noTokenInHistory(token string) {
	p.t.Helper()
	href, err := chromedp.Run(p.b, chromedp.Evaluate[string](`location.href`))
	if err != nil {
		p.t.Fatal(err)
	}
	if strings.Contains(href, token) || strings.Contains(href, "token=") {
		p.t.Fatalf("the address still holds the token: %s", href)
	}
	h, err := chromedp.Run(p.b, chromedp.NavigationEntries())
	if err != nil {
		p.t.Fatal(err)
	}
	for _, e := range h.Entries {
		if strings.Contains(e.URL, token) || strings.Contains(e.URL, "token=") {
			p.t.Fatalf("a history entry holds the token: %s", e.URL)
		}
	}
}

// longTitle is a title as sellers write them, at the public API's 60
// characters.
const longTitle = "Cafetera Espresso Automática Oster Prima Latte Bvstem6603 Gr"

// seedOrders publishes an item of srv.Seller with longTitle and has
// srv.Buyer buy it twice: one order paid (its shipment ready to ship), one
// waiting for its payment. It answers the two orders' ids.
func seedOrders(t *testing.T, srv *marketplacetest.Server) (paid, unpaid int64) {
	t.Helper()
	ctx := context.Background()
	it, err := srv.Marketplace.Stock.PublishMultiOrigin(ctx, srv.Seller.ID, stock.NewItem{Title: longTitle, CategoryID: "MLA1055",
		Price: money.FromInt(1500), ListingTypeID: "gold_special", CurrencyID: "ARS", Condition: "new", Channels: []string{"marketplace"},
		StockLocations: []stock.StockLocation{{StoreID: srv.Seller.Stores[0].ID, Quantity: 4}}})
	if err != nil {
		t.Fatalf("publish: %v", err)
	}
	ids := make([]int64, 2)
	for i, status := range []string{"paid", "payment_required"} {
		o, err := srv.Marketplace.Sales.PlaceOrder(ctx, sales.NewOrder{BuyerID: srv.Buyer.ID, ItemID: it.ID, Quantity: 1, Status: status})
		if err != nil {
			t.Fatalf("place a %s order: %v", status, err)
		}
		ids[i] = o.ID
	}
	return ids[0], ids[1]
}

// openOrders signs in and opens the Orders screen on srv.Seller's orders.
func (p *consolePage) openOrders(orders ...int64) {
	p.t.Helper()
	p.signIn()
	p.step("open the orders", p.nav("orders"))
	for _, id := range orders {
		p.step(fmt.Sprintf("see order %d", id),
			p.until(fmt.Sprintf(`!!document.querySelector('#orders-table tr[data-order-id="%d"] .shipment-status')`, id)))
	}
	p.step("let the orders settle", p.settled())
}

func TestConsole_OrdersTableFitsAt1280PixelsWithALongTitle(t *testing.T) {
	srv := marketplacetest.NewServer(t)
	paid, unpaid := seedOrders(t, srv)
	p := openConsole(t, srv)
	p.openOrders(paid, unpaid)
	if w, _ := chromedp.Run(p.b, chromedp.Evaluate[int](`window.innerWidth`)); w != 1280 {
		t.Fatalf("the window is %d pixels wide", w)
	}
	r, err := chromedp.Run(p.b, chromedp.Evaluate[map[string]float64](`(() => {
		const table = document.querySelector("#orders-table").getBoundingClientRect();
		return { page: document.documentElement.scrollWidth, window: document.documentElement.clientWidth,
			right: table.right, main: document.querySelector("main").getBoundingClientRect().right };
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if r["page"] > r["window"] || r["right"] > r["main"] {
		t.Fatalf("the orders overflow at 1280 pixels: the page is %v wide in a window of %v, the table ends at %v, the screen at %v",
			r["page"], r["window"], r["right"], r["main"])
	}
	// The title wraps: it is shown whole.
	if got := p.text(fmt.Sprintf(`#orders-table tr[data-order-id="%d"] td.order-item`, paid)); !strings.Contains(got, longTitle) {
		t.Fatalf("the item cell says %q", got)
	}
}

// The server moves no shipment of an order that waits for its payment
// (sales.MoveShipment), so the page offers no move for it; the paid
// order's shipment offers the flow's next statuses.
func TestConsole_UnpaidOrderOffersNoShipmentMove(t *testing.T) {
	srv := marketplacetest.NewServer(t)
	paid, unpaid := seedOrders(t, srv)
	p := openConsole(t, srv)
	p.openOrders(paid, unpaid)
	row := func(id int64, sel string) string {
		return fmt.Sprintf(`#orders-table tr[data-order-id="%d"] %s`, id, sel)
	}
	if n := p.count(row(unpaid, ".shipment-move")); n != 0 {
		offered, _ := chromedp.Run(p.b, chromedp.Evaluate[[]string](fmt.Sprintf(`[...document.querySelectorAll(%q)].map(o => o.value)`, row(unpaid, ".shipment-next option"))))
		t.Fatalf("the unpaid order offers %d shipment moves (%v)", n, offered)
	}
	if got := p.text(row(unpaid, ".shipment-moves")); got != "waits for the payment" {
		t.Fatalf("the unpaid order's move cell says %q", got)
	}
	offered, err := chromedp.Run(p.b, chromedp.Evaluate[[]string](fmt.Sprintf(`[...document.querySelector(%q).options].map(o => o.value)`, row(paid, ".shipment-next"))))
	if err != nil || !slices.Equal(offered, []string{"shipped", "cancelled"}) {
		t.Fatalf("the paid order offers %v (%v), want the moves after ready_to_ship", offered, err)
	}
	// Paid, the order's shipment moves like any other.
	if _, err := srv.Marketplace.Sales.Pay(context.Background(), unpaid, sales.PaymentInput{Status: "approved"}); err != nil {
		t.Fatalf("pay: %v", err)
	}
	p.step("show the orders again", chromedp.Click("#orders-load"), p.settled(),
		p.until(fmt.Sprintf(`document.querySelectorAll(%q).length === 1`, row(unpaid, ".shipment-move"))))
}

func TestConsole_ClockExampleIsADayAfterTheServerClock(t *testing.T) {
	srv := marketplacetest.NewServer(t)
	now := time.Date(2031, 7, 9, 18, 30, 5, 0, time.UTC)
	if err := srv.Clock.Set(now); err != nil {
		t.Fatal(err)
	}
	p := openConsole(t, srv)
	p.signIn()
	p.step("open the clock", p.nav("clock"), p.until(`document.querySelector("#clock-value").textContent === "2031-07-09T18:30:05Z"`))
	example, err := chromedp.Run(p.b, chromedp.Evaluate[string](`document.querySelector("#clock-set-input").placeholder`))
	if err != nil {
		t.Fatal(err)
	}
	if want := "2031-07-10T18:30:05Z"; example != want {
		t.Fatalf("the example is %q, want the server's clock and a day: %s", example, want)
	}
	// The example, typed as it is, moves the clock forward.
	p.step("set the clock to the example",
		chromedp.SendKeys("#clock-set-input", example),
		chromedp.Click("#clock-set"),
		p.until(`document.querySelector("#message").textContent.startsWith("The clock is now")`),
	)
	if got := srv.Clock.Now(); !got.Equal(now.Add(24 * time.Hour)) {
		t.Fatalf("the clock is %v after setting the example", got)
	}
	p.step("see the example follow the clock", p.until(`document.querySelector("#clock-set-input").placeholder === "2031-07-11T18:30:05Z"`))
}

// sales.Cancel refuses an order whose shipment is shipped or delivered (a
// sale then ends through a claim), so the page offers no Cancel for it.
func TestConsole_ShippedOrderOffersNoCancel(t *testing.T) {
	srv := marketplacetest.NewServer(t)
	paid, unpaid := seedOrders(t, srv)
	ctx := context.Background()
	o, err := srv.Marketplace.Sales.Order(ctx, srv.Seller.ID, paid)
	if err != nil {
		t.Fatalf("read the order: %v", err)
	}
	if _, err := srv.Marketplace.Sales.MoveShipment(ctx, *o.Shipping.ID, sales.ShipmentMove{Status: "shipped"}); err != nil {
		t.Fatalf("ship: %v", err)
	}
	p := openConsole(t, srv)
	p.openOrders(paid, unpaid)
	row := func(id int64, sel string) string {
		return fmt.Sprintf(`#orders-table tr[data-order-id="%d"] %s`, id, sel)
	}
	if n := p.count(row(paid, ".order-cancel")); n != 0 {
		t.Fatalf("the shipped order offers %d cancellations", n)
	}
	if n := p.count(row(unpaid, ".order-cancel")); n != 1 {
		t.Fatalf("the unpaid order offers %d cancellations; want 1", n)
	}
}
