package roundtrips

import (
	"fmt"
	"net/url"
)

// routeCase is how the test calls one route of the route table: the i-th
// request it sends, built with whatever setup that request needs (the
// setup's round trips are not counted).
type routeCase struct {
	// method and path are the route's entry in httpapi's route table.
	method, path string
	// name names the case where it differs from the route: a static name
	// that the parameter route serves (GET /questions/search).
	name string
	// read marks a POST that only reads (its body is a query).
	read bool
	// status is the answer wanted; 0 is any 2xx.
	status int
	// req builds the i-th request.
	req func(w *world, i int) request
}

// key names the case in the bounds and the table.
func (c routeCase) key() string {
	if c.name != "" {
		return c.name
	}
	return c.method + " " + c.path
}

// isWrite says whether the case's route changes state.
func (c routeCase) isWrite() bool {
	return !c.read && c.method != "GET" && c.method != "HEAD"
}

func get(target, token string) request { return request{method: "GET", target: target, token: token} }

func op(method, target string, body any) request {
	return request{method: method, target: target, token: operatorToken, body: body}
}

func byUser(method, target string, u user, body any) request {
	return request{method: method, target: target, token: u.Token, body: body}
}

// fixed returns the same request every time.
func fixed(r func(w *world) request) func(*world, int) request {
	return func(w *world, _ int) request { return r(w) }
}

// cases lists a case for every route, in the order they run: the routes
// that replace the state (reset, restore) come last, and the fault rules,
// stubs and recordings run after the routes they could answer.
var cases = []routeCase{
	// operations
	{method: "GET", path: "/health", req: fixed(func(*world) request { return get("/health", "") })},
	{method: "HEAD", path: "/health", req: fixed(func(*world) request { return request{method: "HEAD", target: "/health"} })},
	{method: "GET", path: "/ready", req: fixed(func(*world) request { return get("/ready", "") })},
	{method: "HEAD", path: "/ready", req: fixed(func(*world) request { return request{method: "HEAD", target: "/ready"} })},
	{method: "GET", path: "/version", req: fixed(func(*world) request { return get("/version", "") })},
	{method: "HEAD", path: "/version", req: fixed(func(*world) request { return request{method: "HEAD", target: "/version"} })},
	{method: "GET", path: "/openapi.json", req: fixed(func(*world) request { return get("/openapi.json", "") })},
	{method: "GET", path: "/metrics", req: fixed(func(*world) request { return get("/metrics", "") })},

	// accounts
	{method: "GET", path: "/users/:user_id", req: fixed(func(w *world) request {
		return get(fmt.Sprintf("/users/%d", w.seller.ID), w.buyer.Token)
	})},
	{method: "GET", path: "/users/:user_id", name: "GET /users/me", req: fixed(func(w *world) request { return get("/users/me", w.seller.Token) })},
	{method: "GET", path: "/users/:user_id/stores/search", req: fixed(func(w *world) request {
		return get(fmt.Sprintf("/users/%d/stores/search?tags=stock_location", w.seller.ID), w.seller.Token)
	})},
	{method: "POST", path: "/operator/users", req: func(w *world, _ int) request {
		return op("POST", "/operator/users", map[string]any{"nickname": w.name("NEW"), "site_id": "MLA",
			"first_name": "A", "last_name": "B", "tags": []string{"normal"}})
	}},
	{method: "GET", path: "/operator/users/:user_id", req: fixed(func(w *world) request {
		return op("GET", fmt.Sprintf("/operator/users/%d", w.seller.ID), nil)
	})},
	{method: "POST", path: "/operator/users/:user_id/tokens", req: fixed(func(w *world) request {
		return op("POST", fmt.Sprintf("/operator/users/%d/tokens", w.plain.ID), nil)
	})},
	{method: "DELETE", path: "/operator/users/:user_id/tokens", req: func(w *world, _ int) request {
		return op("DELETE", fmt.Sprintf("/operator/users/%d/tokens", w.mustUser().ID), nil)
	}},
	{method: "POST", path: "/operator/tokens/revoke", req: func(w *world, _ int) request {
		return op("POST", "/operator/tokens/revoke", map[string]any{"access_token": w.mustUser().Token})
	}},
	{method: "PUT", path: "/operator/users/:user_id/tags", req: fixed(func(w *world) request {
		return op("PUT", fmt.Sprintf("/operator/users/%d/tags", w.plain.ID), map[string]any{"tags": []string{"normal"}})
	})},
	{method: "POST", path: "/operator/users/:user_id/stores", req: fixed(func(w *world) request {
		return op("POST", fmt.Sprintf("/operator/users/%d/stores", w.plain.ID), storeBody())
	})},
	{method: "PUT", path: "/operator/reference", req: fixed(func(w *world) request {
		return op("PUT", "/operator/reference", map[string]any{"records": []any{map[string]any{"kind": "currency",
			"data": map[string]any{"id": "ZZZ", "symbol": "Z", "description": "Zed", "decimal_places": 2}}}})
	})},

	// stock
	{method: "POST", path: "/items", req: fixed(func(w *world) request { return byUser("POST", "/items", w.plain, plainItemBody()) })},
	{method: "POST", path: "/items/:item_id", name: "POST /items/multiwarehouse", req: fixed(func(w *world) request {
		return byUser("POST", "/items/multiwarehouse", w.seller, w.multiItemBody())
	})},
	{method: "GET", path: "/items/:item_id", req: fixed(func(w *world) request { return get("/items/"+w.multiItem, w.buyer.Token) })},
	{method: "PUT", path: "/items/:item_id", req: func(w *world, i int) request {
		return byUser("PUT", "/items/"+w.plainItem, w.plain, map[string]any{"price": 1000 + i})
	}},
	{method: "POST", path: "/items/:item_id/relist", req: func(w *world, _ int) request {
		// A closed item is relisted as a new one.
		item := w.mustPlainItem()
		w.must(200, "PUT", "/items/"+item, w.plain.Token, map[string]any{"status": "closed"})
		return byUser("POST", "/items/"+item+"/relist", w.plain, map[string]any{"price": 1300, "quantity": 2, "listing_type_id": "gold_special"})
	}},
	{method: "GET", path: "/user-products/:user_product_id/stock", req: fixed(func(w *world) request {
		return get("/user-products/"+w.up+"/stock", w.seller.Token)
	})},
	{method: "PUT", path: "/user-products/:user_product_id/stock/type/seller_warehouse", req: func(w *world, i int) request {
		// With the x-version of the stock as read, as a client does.
		version := w.must(200, "GET", "/user-products/"+w.up+"/stock", w.seller.Token, nil).header.Get("x-version")
		r := byUser("PUT", "/user-products/"+w.up+"/stock/type/seller_warehouse", w.seller,
			map[string]any{"locations": []any{map[string]any{"store_id": w.stores[1], "quantity": 4 + i%3}}})
		r.headers = map[string]string{"x-version": version}
		return r
	}},
	{method: "GET", path: "/sites/:site_id/search", req: fixed(func(w *world) request { return get("/sites/MLA/search?q=mate", "") })},

	// sales
	{method: "POST", path: "/operator/orders", req: fixed(func(w *world) request {
		return op("POST", "/operator/orders", map[string]any{"buyer_id": w.buyer.ID, "item_id": w.buyItem, "quantity": 1})
	})},
	{method: "GET", path: "/orders/:order_id", req: fixed(func(w *world) request { return get("/orders/"+w.sale.id, w.buyer.Token) })},
	{method: "GET", path: "/orders/:order_id", name: "GET /orders/search", req: fixed(func(w *world) request {
		return get(fmt.Sprintf("/orders/search?seller=%d&limit=50", w.plain.ID), w.plain.Token)
	})},
	{method: "GET", path: "/packs/:pack_id", req: fixed(func(w *world) request { return get("/packs/"+w.sale.pack, w.buyer.Token) })},
	{method: "GET", path: "/shipments/:shipment_id", req: fixed(func(w *world) request {
		return get("/shipments/"+w.sale.shipment, w.buyer.Token)
	})},
	{method: "GET", path: "/shipments/:shipment_id/history", req: fixed(func(w *world) request {
		return get("/shipments/"+w.sale.shipment+"/history", w.buyer.Token)
	})},
	{method: "GET", path: "/shipment_statuses", req: fixed(func(w *world) request { return get("/shipment_statuses", w.buyer.Token) })},
	{method: "GET", path: "/operator/orders", req: fixed(func(w *world) request {
		return op("GET", fmt.Sprintf("/operator/orders?seller=%d", w.plain.ID), nil)
	})},
	{method: "GET", path: "/operator/orders/:order_id", req: fixed(func(w *world) request { return op("GET", "/operator/orders/"+w.sale.id, nil) })},
	{method: "POST", path: "/operator/orders/:order_id/payments", req: func(w *world, _ int) request {
		s := w.mustSale(map[string]any{"buyer_id": w.buyer.ID, "item_id": w.plainItem, "quantity": 1, "status": "payment_required"})
		return op("POST", "/operator/orders/"+s.id+"/payments", map[string]any{"status": "approved"})
	}},
	{method: "POST", path: "/operator/orders/:order_id/cancel", req: func(w *world, _ int) request {
		s := w.mustSale(map[string]any{"buyer_id": w.buyer.ID, "item_id": w.plainItem, "quantity": 1})
		return op("POST", "/operator/orders/"+s.id+"/cancel", nil)
	}},
	{method: "PUT", path: "/operator/shipments/:shipment_id/status", req: func(w *world, _ int) request {
		s := w.mustSale(map[string]any{"buyer_id": w.buyer.ID, "item_id": w.plainItem, "quantity": 1})
		return op("PUT", "/operator/shipments/"+s.shipment+"/status", map[string]any{"status": "shipped"})
	}},

	// questions
	{method: "GET", path: "/questions/:question_id", req: fixed(func(w *world) request {
		return get("/questions/"+w.answered, w.buyer.Token)
	})},
	{method: "GET", path: "/questions/:question_id", name: "GET /questions/search", req: fixed(func(w *world) request {
		return get("/questions/search?item="+w.multiItem, w.buyer.Token)
	})},
	{method: "POST", path: "/questions", req: func(w *world, i int) request {
		return byUser("POST", "/questions", w.buyer, map[string]any{"text": fmt.Sprintf("Does it ship? (%d)", i), "item_id": w.multiItem})
	}},
	{method: "DELETE", path: "/questions/:question_id", req: func(w *world, _ int) request {
		return byUser("DELETE", "/questions/"+w.mustAsk(w.buyer, w.multiItem), w.seller, nil)
	}},
	{method: "POST", path: "/answers", req: func(w *world, _ int) request {
		return byUser("POST", "/answers", w.seller, map[string]any{"question_id": num(w.mustAsk(w.buyer, w.multiItem)), "text": "Yes"})
	}},
	{method: "POST", path: "/my/questions/hidden", req: func(w *world, _ int) request {
		return byUser("POST", "/my/questions/hidden", w.seller, map[string]any{"question_ids": []int64{num(w.mustAsk(w.buyer, w.multiItem))}})
	}},
	{method: "PUT", path: "/operator/questions/:question_id", req: func(w *world, _ int) request {
		return op("PUT", "/operator/questions/"+w.mustAsk(w.buyer, w.multiItem), map[string]any{"status": "BANNED"})
	}},
	{method: "POST", path: "/users/:user_id/questions_blacklist", req: func(w *world, _ int) request {
		return byUser("POST", fmt.Sprintf("/users/%d/questions_blacklist", w.seller.ID), w.seller, map[string]any{"user_id": w.mustUser().ID})
	}},
	{method: "GET", path: "/users/:user_id/questions_blacklist", req: fixed(func(w *world) request {
		return get(fmt.Sprintf("/users/%d/questions_blacklist", w.seller.ID), w.seller.Token)
	})},
	{method: "DELETE", path: "/users/:user_id/questions_blacklist/:blocked_id", req: func(w *world, _ int) request {
		blocked := w.mustUser()
		w.must(201, "POST", fmt.Sprintf("/users/%d/questions_blacklist", w.seller.ID), w.seller.Token, map[string]any{"user_id": blocked.ID})
		return byUser("DELETE", fmt.Sprintf("/users/%d/questions_blacklist/%d", w.seller.ID, blocked.ID), w.seller, nil)
	}},
	{method: "GET", path: "/users/:user_id/questions/response_time", req: fixed(func(w *world) request {
		return get(fmt.Sprintf("/users/%d/questions/response_time", w.seller.ID), w.seller.Token)
	})},

	// reference data
	{method: "GET", path: "/sites/:site_id/listing_prices", req: fixed(func(*world) request { return get("/sites/MLA/listing_prices?price=10630", "") })},
	{method: "GET", path: "/sites/:site_id/listing_prices/:listing_type_id", req: fixed(func(*world) request {
		return get("/sites/MLA/listing_prices/gold_special?price=10630", "")
	})},
	{method: "GET", path: "/classified_locations/countries", req: fixed(func(*world) request { return get("/classified_locations/countries", "") })},
	{method: "GET", path: "/classified_locations/countries/:country_id", req: fixed(func(*world) request {
		return get("/classified_locations/countries/AR", "")
	})},
	{method: "GET", path: "/classified_locations/states/:state_id", req: fixed(func(*world) request {
		return get("/classified_locations/states/AR-C", "")
	})},
	{method: "GET", path: "/classified_locations/cities/:city_id", req: fixed(func(*world) request {
		return get("/classified_locations/cities/TUxBQ0lUQ1BhbGVybW8", "")
	})},
	{method: "GET", path: "/currencies", req: fixed(func(*world) request { return get("/currencies", "") })},
	{method: "GET", path: "/currencies/:currency_id", req: fixed(func(*world) request { return get("/currencies/ARS", "") })},
	{method: "GET", path: "/currency_conversions/search", req: fixed(func(*world) request {
		return get("/currency_conversions/search?from=USD&to=ARS", "")
	})},
	{method: "GET", path: "/countries/:country_id/zip_codes/:zip_code", req: fixed(func(*world) request {
		return get("/countries/AR/zip_codes/1000", "")
	})},
	{method: "GET", path: "/country/:country_id/zip_codes/search_between", req: fixed(func(*world) request {
		return get("/country/AR/zip_codes/search_between?zip_code_from=1000&zip_code_to=1010", "")
	})},
	{method: "GET", path: "/sites", req: fixed(func(*world) request { return get("/sites", "") })},
	{method: "GET", path: "/sites/:site_id", req: fixed(func(*world) request { return get("/sites/MLA", "") })},
	{method: "GET", path: "/sites/:site_id/categories", req: fixed(func(*world) request { return get("/sites/MLA/categories", "") })},
	{method: "GET", path: "/categories/:category_id", req: fixed(func(*world) request { return get("/categories/MLA1055", "") })},

	// catalog
	{method: "GET", path: "/sites/:site_id/domains", req: fixed(func(*world) request { return get("/sites/MLA/domains", "") })},
	{method: "GET", path: "/catalog_domains/:domain_id/products", req: fixed(func(*world) request {
		return get("/catalog_domains/MLA-CELLPHONES/products", "")
	})},
	{method: "GET", path: "/products/:product_id", req: fixed(func(*world) request { return get("/products/MLA27172677", "") })},

	// public reads
	{method: "GET", path: "/items", req: fixed(func(w *world) request {
		return get("/items?ids="+w.multiItem+","+w.plainItem, w.buyer.Token)
	})},
	{method: "GET", path: "/users", req: fixed(func(w *world) request {
		return get(fmt.Sprintf("/users?ids=%d,%d", w.seller.ID, w.plain.ID), w.buyer.Token)
	})},
	{method: "GET", path: "/users/:user_id/items/search", req: fixed(func(w *world) request {
		return get(fmt.Sprintf("/users/%d/items/search", w.seller.ID), w.seller.Token)
	})},

	// notifications
	{method: "POST", path: "/operator/applications", req: fixed(func(w *world) request {
		return op("POST", "/operator/applications", map[string]any{"name": "App", "owner_user_id": w.seller.ID,
			"callback_url": "https://example.com/cb", "topics": []string{"questions"}})
	})},
	{method: "GET", path: "/operator/applications/:app_id", req: fixed(func(w *world) request {
		return op("GET", "/operator/applications/"+w.app.ID, nil)
	})},
	{method: "PUT", path: "/operator/applications/:app_id", req: fixed(func(w *world) request {
		return op("PUT", "/operator/applications/"+w.app.ID, map[string]any{"callback_url": "https://example.com/other",
			"topics": []string{"questions", "items"}, "redirect_uris": []string{appRedirect}})
	})},
	{method: "GET", path: "/operator/applications/:app_id/deliveries", req: fixed(func(w *world) request {
		return op("GET", "/operator/applications/"+w.app.ID+"/deliveries", nil)
	})},
	{method: "GET", path: "/missed_feeds", req: fixed(func(w *world) request {
		return get("/missed_feeds?app_id="+w.app.ID, w.seller.Token)
	})},
	{method: "POST", path: "/operator/applications/:app_id/deliveries/:delivery_id/redeliver", status: 404,
		// A delivery exists only once the background work has sent a
		// notification, and the test runs without it: the route answers
		// its documented 404 for an unknown delivery, after reading the
		// application and the delivery.
		req: fixed(func(w *world) request {
			return op("POST", "/operator/applications/"+w.app.ID+"/deliveries/1/redeliver", nil)
		})},

	// OAuth
	{method: "GET", path: "/authorization", req: fixed(func(w *world) request {
		return get("/authorization?"+w.authorizationQuery().Encode(), "")
	})},
	{method: "POST", path: "/authorization", status: 302,
		// A grant is answered by a redirect to the client with the code.
		req: fixed(func(w *world) request {
			form := w.authorizationQuery()
			form.Set("operator_token", operatorToken)
			form.Set("user_id", fmt.Sprint(w.seller.ID))
			return request{method: "POST", target: "/authorization", body: form.Encode(),
				headers: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}}
		})},
	{method: "POST", path: "/operator/authorizations", req: fixed(func(w *world) request {
		return op("POST", "/operator/authorizations", map[string]any{"client_id": num(w.app.ClientID), "user_id": w.seller.ID, "redirect_uri": appRedirect})
	})},
	{method: "POST", path: "/oauth/token", req: func(w *world, _ int) request {
		form := url.Values{"grant_type": {"authorization_code"}, "client_id": {w.app.ClientID}, "client_secret": {w.app.Secret},
			"code": {w.mustCode()}, "redirect_uri": {appRedirect}}
		return request{method: "POST", target: "/oauth/token", body: form.Encode(),
			headers: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}}
	}},
	{method: "POST", path: "/operator/applications/:app_id/secret", req: func(w *world, _ int) request {
		return op("POST", "/operator/applications/"+w.mustApp(w.plain.ID).ID+"/secret", nil)
	}},
	{method: "POST", path: "/users/:user_id", name: "POST /users/test_user", req: func(w *world, _ int) request {
		// A user may create only so many test users: each request is by
		// a new one.
		return byUser("POST", "/users/test_user", w.mustUser(), map[string]any{"site_id": "MLA"})
	}},

	// operator lists
	{method: "GET", path: "/operator/users", req: fixed(func(*world) request { return op("GET", "/operator/users?limit=50", nil) })},
	{method: "GET", path: "/operator/users/:user_id/stores", req: fixed(func(w *world) request {
		return op("GET", fmt.Sprintf("/operator/users/%d/stores", w.seller.ID), nil)
	})},
	{method: "GET", path: "/operator/items", req: fixed(func(w *world) request {
		return op("GET", fmt.Sprintf("/operator/items?seller_id=%d", w.seller.ID), nil)
	})},
	{method: "GET", path: "/operator/applications", req: fixed(func(w *world) request {
		return op("GET", fmt.Sprintf("/operator/applications?owner_user_id=%d", w.seller.ID), nil)
	})},

	// the request journal
	{method: "GET", path: "/operator/requests", req: fixed(func(*world) request { return op("GET", "/operator/requests?limit=10", nil) })},
	{method: "POST", path: "/operator/requests/count", read: true, req: fixed(func(*world) request {
		return op("POST", "/operator/requests/count", map[string]any{"method": "GET", "urlPath": "/currencies"})
	})},
	{method: "POST", path: "/operator/requests/find", read: true, req: fixed(func(*world) request {
		return op("POST", "/operator/requests/find", map[string]any{"method": "GET", "urlPath": "/currencies"})
	})},
	{method: "DELETE", path: "/operator/requests", req: fixed(func(*world) request { return op("DELETE", "/operator/requests", nil) })},

	// fault rules, on a route no case calls after them
	{method: "POST", path: "/operator/faults", req: fixed(func(*world) request {
		return op("POST", "/operator/faults", map[string]any{"method": "GET", "route": "/shipment_statuses", "status": 503})
	})},
	{method: "GET", path: "/operator/faults", req: fixed(func(*world) request { return op("GET", "/operator/faults", nil) })},
	{method: "GET", path: "/operator/faults/:fault_id", req: fixed(func(w *world) request {
		return op("GET", "/operator/faults/"+w.mustFault(), nil)
	})},
	{method: "DELETE", path: "/operator/faults/:fault_id", req: func(w *world, _ int) request {
		return op("DELETE", "/operator/faults/"+w.mustFault(), nil)
	}},
	{method: "DELETE", path: "/operator/faults", req: fixed(func(*world) request { return op("DELETE", "/operator/faults", nil) })},

	// stubs, on a path that no route serves
	{method: "POST", path: "/operator/stubs", req: fixed(func(*world) request { return op("POST", "/operator/stubs", stubBody()) })},
	{method: "GET", path: "/operator/stubs", req: fixed(func(*world) request { return op("GET", "/operator/stubs", nil) })},
	{method: "GET", path: "/operator/stubs/:stub_id", req: fixed(func(w *world) request {
		return op("GET", "/operator/stubs/"+w.mustStub(), nil)
	})},
	{method: "DELETE", path: "/operator/stubs/:stub_id", req: func(w *world, _ int) request {
		return op("DELETE", "/operator/stubs/"+w.mustStub(), nil)
	}},
	{method: "DELETE", path: "/operator/stubs", req: fixed(func(*world) request { return op("DELETE", "/operator/stubs", nil) })},

	// recordings, to an upstream that is never asked (only requests that
	// no route serves are forwarded)
	{method: "POST", path: "/operator/recordings/start", req: func(w *world, _ int) request {
		w.stopRecording()
		return op("POST", "/operator/recordings/start", map[string]any{"targetBaseUrl": "http://127.0.0.1:9", "persist": false})
	}},
	{method: "GET", path: "/operator/recordings/status", req: fixed(func(*world) request { return op("GET", "/operator/recordings/status", nil) })},
	{method: "POST", path: "/operator/recordings/stop", req: func(w *world, _ int) request {
		w.startRecording()
		return op("POST", "/operator/recordings/stop", nil)
	}},
	{method: "POST", path: "/operator/recordings/snapshot", status: 409,
		// A snapshot draws on the journal's bodies, which a server keeps
		// only with -journal-bodies (not its default): its documented
		// answer is then 409.
		req: fixed(func(*world) request {
			return op("POST", "/operator/recordings/snapshot", map[string]any{"persist": false})
		})},

	// clock, fixtures, snapshots, reset: last, as they replace the state
	// The server runs on the wall clock (see newWorld): the clock routes
	// answer their documented 409, having read nothing.
	{method: "GET", path: "/operator/clock", status: 409, req: fixed(func(*world) request { return op("GET", "/operator/clock", nil) })},
	{method: "PUT", path: "/operator/clock", status: 409, req: fixed(func(*world) request {
		return op("PUT", "/operator/clock", map[string]any{"now": "2030-01-01T00:00:00Z"})
	})},
	{method: "PUT", path: "/operator/fixtures", req: func(w *world, _ int) request {
		n := w.name("fx")
		return op("PUT", "/operator/fixtures", map[string]any{"users": []any{map[string]any{"name": n, "nickname": "FX_" + n, "site_id": "MLA"}}})
	}},
	{method: "POST", path: "/operator/snapshots", req: fixed(func(*world) request {
		return op("POST", "/operator/snapshots", map[string]any{"name": "before"})
	})},
	{method: "GET", path: "/operator/snapshots", req: fixed(func(*world) request { return op("GET", "/operator/snapshots", nil) })},
	{method: "DELETE", path: "/operator/snapshots/:snapshot_id", req: func(w *world, _ int) request {
		id := idString(w.must(201, "POST", "/operator/snapshots", operatorToken, map[string]any{"name": "to delete"}).obj()["id"])
		return op("DELETE", "/operator/snapshots/"+id, nil)
	}},
	{method: "POST", path: "/operator/snapshots/:snapshot_id/restore", req: fixed(func(w *world) request {
		return op("POST", "/operator/snapshots/"+w.snapshot+"/restore", nil)
	})},
	{method: "POST", path: "/operator/reset", req: fixed(func(*world) request { return op("POST", "/operator/reset", nil) })},
}

func (w *world) authorizationQuery() url.Values {
	return url.Values{"response_type": {"code"}, "client_id": {w.app.ClientID}, "redirect_uri": {appRedirect}, "state": {"xyz"}}
}

func (w *world) mustFault() string {
	w.t.Helper()
	res := w.must(201, "POST", "/operator/faults", operatorToken, map[string]any{"method": "GET", "route": "/shipment_statuses", "status": 503})
	return idString(res.obj()["id"])
}

func stubBody() map[string]any {
	return map[string]any{"request": map[string]any{"method": "GET", "urlPathTemplate": "/v1/payments/{id}"},
		"response": map[string]any{"status": 200, "jsonBody": map[string]any{"status": "approved"}}}
}

func (w *world) mustStub() string {
	w.t.Helper()
	return idString(w.must(201, "POST", "/operator/stubs", operatorToken, stubBody()).obj()["id"])
}

// stopRecording stops the recording that runs, if one does.
func (w *world) stopRecording() {
	w.t.Helper()
	res := w.serve(op("POST", "/operator/recordings/stop", nil))
	if res.status != 200 && res.status != 409 {
		w.t.Fatalf("stop recording: %d %s", res.status, res.raw)
	}
}

// startRecording starts a recording unless one runs.
func (w *world) startRecording() {
	w.t.Helper()
	res := w.serve(op("POST", "/operator/recordings/start", map[string]any{"targetBaseUrl": "http://127.0.0.1:9", "persist": false}))
	if res.status != 200 && res.status != 409 {
		w.t.Fatalf("start recording: %d %s", res.status, res.raw)
	}
}
