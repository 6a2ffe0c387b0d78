package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/marketplacetest"
	"github.com/marketplace/marketplace/stock"
)

// TestConsole_InChromium drives the operator console in a real headless
// browser through an operator's day: sign in, create a seller with a store,
// register the seller's application, publish an item, change its stock, see
// a stale edit refused with 409, ask, answer and moderate a question, and move the
// clock to see a failed notification retried and acknowledged.
//
// With CONSOLE_SCREENSHOTS=dir it also saves a PNG of each main screen in
// dir (docs/console holds the ones the documentation shows).
func TestConsole_InChromium(t *testing.T) {
	browser := chromiumPath(t)

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
	shots := os.Getenv("CONSOLE_SCREENSHOTS")

	// A bound for a browser that hangs, not a timing the test relies on.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(browser),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("no-first-run", true),
		chromedp.WindowSize(1400, 900),
		chromedp.UserDataDir(t.TempDir()),
	)
	defer cancelAlloc()
	b, cancelBrowser := chromedp.NewContext(actx)
	defer cancelBrowser()

	step := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(b, actions...); err != nil {
			msg, _ := chromedp.Run(b, chromedp.Evaluate[string](`document.querySelector("#message").textContent`))
			t.Fatalf("browser: %s: %v (the page says %q)", what, err, msg)
		}
	}
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(b, chromedp.Text(sel))
		if err != nil {
			t.Fatalf("browser: text of %s: %v", sel, err)
		}
		return s
	}
	// until waits for a predicate of the page; the page's own timers do
	// the polling, so the test only waits, it never times a pass.
	until := func(js string) chromedp.Action[chromedp.Void] {
		return chromedp.Poll[chromedp.Void](js, chromedp.WithPollingTimeout(time.Minute))
	}
	shot := func(name string) {
		t.Helper()
		if shots == "" {
			return
		}
		// Quality 100 makes chromium encode PNG; below it, JPEG.
		png, err := chromedp.Run(b, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("screenshot %s: %v", name, err)
		}
		if err := os.WriteFile(filepath.Join(shots, name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// settled waits until the page has no request in flight, so that a
	// table is not rendered again under the keys the test types into it.
	settled := until(`document.body.dataset.pending === "0"`)
	nav := func(screen string) chromedp.Action[chromedp.Void] {
		return chromedp.Steps(chromedp.Click(`nav button[data-screen="`+screen+`"]`), settled)
	}

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
		chromedp.SetValue("#app-owner", strconv.FormatInt(sellerID, 10)),
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
		chromedp.SetValue("#q-item", itemID),
		chromedp.SetValue("#q-asker", strconv.FormatInt(srv.Buyer.ID, 10)),
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
	shot("questions")
	step("moderate the question",
		chromedp.SetValue(".moderate-status", "status:UNDER_REVIEW"),
		chromedp.Click(".moderate-send"),
		until(`document.querySelector("#questions-table .question-status")?.textContent === "UNDER_REVIEW"`),
	)

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
