package marketplace

import (
	"context"
	"fmt"

	"marketplace/accounts"
)

// CreateUser registers a user and issues its first access token: the
// operator's way to set up a seller or a buyer.
func (m *Marketplace) CreateUser(ctx context.Context, in accounts.NewUser) (accounts.User, string, error) {
	u, err := m.Accounts.CreateUser(ctx, in)
	if err != nil {
		return accounts.User{}, "", err
	}
	tok, err := m.Accounts.IssueToken(ctx, u.ID)
	if err != nil {
		return accounts.User{}, "", err
	}
	return u, tok, nil
}

// The demo accounts' fixed tokens, documented in the README so that a new user
// can call the API at once. They are for local use only.
const (
	DemoSellerToken = "APP_USR-demo-seller-0000000000000001"
	DemoBuyerToken  = "APP_USR-demo-buyer-00000000000000002"
)

// Demo describes the demo accounts.
type Demo struct {
	Seller      accounts.User    `json:"seller"`
	SellerToken string           `json:"seller_token"`
	Stores      []accounts.Store `json:"stores"`
	Buyer       accounts.User    `json:"buyer"`
	BuyerToken  string           `json:"buyer_token"`
}

// EnsureDemo creates, once, a demo seller on MLA with the
// warehouse_management tag and two stock-location stores, and a demo buyer,
// each reachable with its fixed token. Calling it again returns the same
// accounts.
func (m *Marketplace) EnsureDemo(ctx context.Context) (Demo, error) {
	d := Demo{SellerToken: DemoSellerToken, BuyerToken: DemoBuyerToken}
	seller, err := m.ensureDemoUser(ctx, DemoSellerToken, accounts.NewUser{
		Nickname: "DEMO_SELLER", SiteID: "MLA", FirstName: "Demo", LastName: "Seller",
		Tags: []string{"normal", "user_product_seller", accounts.TagWarehouseManagement},
	})
	if err != nil {
		return Demo{}, err
	}
	d.Seller = seller
	stores, _, err := m.Accounts.SearchStores(ctx, seller.ID, seller.ID, accounts.StoreQuery{Limit: 10})
	if err != nil {
		return Demo{}, err
	}
	if len(stores) == 0 {
		for i, loc := range []accounts.Location{
			{AddressLine: "Avenida Corrientes 1234", StreetName: "Avenida Corrientes", StreetNumber: 1234,
				Latitude: -34.6037, Longitude: -58.3816, City: "Buenos Aires", State: "Capital Federal", Country: "Argentina", ZipCode: "1043"},
			{AddressLine: "Calle 50 800", StreetName: "Calle 50", StreetNumber: 800,
				Latitude: -34.9214, Longitude: -57.9545, City: "La Plata", State: "Buenos Aires", Country: "Argentina", ZipCode: "1900"},
		} {
			loc.AddressID = int64(i + 1)
			st, err := m.Accounts.CreateStore(ctx, seller.ID, accounts.NewStore{
				Description: fmt.Sprintf("Demo warehouse %d", i+1), Location: loc,
				Tags: []string{accounts.TagStockLocation},
			})
			if err != nil {
				return Demo{}, err
			}
			stores = append(stores, st)
		}
	}
	d.Stores = stores
	buyer, err := m.ensureDemoUser(ctx, DemoBuyerToken, accounts.NewUser{
		Nickname: "DEMO_BUYER", SiteID: "MLA", FirstName: "Demo", LastName: "Buyer",
	})
	if err != nil {
		return Demo{}, err
	}
	d.Buyer = buyer
	return d, nil
}

func (m *Marketplace) ensureDemoUser(ctx context.Context, token string, in accounts.NewUser) (accounts.User, error) {
	if id, err := m.Accounts.Authenticate(ctx, token); err == nil {
		return m.Accounts.User(ctx, id)
	}
	u, err := m.Accounts.CreateUser(ctx, in)
	if err != nil {
		return accounts.User{}, err
	}
	return u, m.Accounts.AddToken(ctx, u.ID, token)
}
