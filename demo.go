package marketplace

import (
	"context"
	"fmt"

	"github.com/marketplace/marketplace/accounts"
)

// CreateUser registers a user and issues its first access token: the
// operator's way to set up a seller or a buyer.
func (m *Marketplace) CreateUser(ctx context.Context, in accounts.NewUser) (accounts.User, string, error) {
	return m.Accounts.CreateUserWithToken(ctx, in)
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
// accounts, also when several engines on one database (servers starting
// together) call it at once.
func (m *Marketplace) EnsureDemo(ctx context.Context) (Demo, error) {
	d := Demo{SellerToken: DemoSellerToken, BuyerToken: DemoBuyerToken}
	var stores []accounts.NewStore
	for i, loc := range []accounts.Location{
		{AddressLine: "Avenida Corrientes 1234", StreetName: "Avenida Corrientes", StreetNumber: 1234,
			Latitude: -34.6037, Longitude: -58.3816, City: "Buenos Aires", State: "Capital Federal", Country: "Argentina", ZipCode: "1043"},
		{AddressLine: "Calle 50 800", StreetName: "Calle 50", StreetNumber: 800,
			Latitude: -34.9214, Longitude: -57.9545, City: "La Plata", State: "Buenos Aires", Country: "Argentina", ZipCode: "1900"},
	} {
		loc.AddressID = int64(i + 1)
		stores = append(stores, accounts.NewStore{
			Description: fmt.Sprintf("Demo warehouse %d", i+1), Location: loc,
			Tags: []string{accounts.TagStockLocation},
		})
	}
	var err error
	d.Seller, d.Stores, err = m.Accounts.EnsureUser(ctx, DemoSellerToken, accounts.NewUser{
		Nickname: "DEMO_SELLER", SiteID: "MLA", FirstName: "Demo", LastName: "Seller",
		Tags: []string{"normal", "user_product_seller", accounts.TagWarehouseManagement},
	}, stores)
	if err != nil {
		return Demo{}, err
	}
	d.Buyer, _, err = m.Accounts.EnsureUser(ctx, DemoBuyerToken, accounts.NewUser{
		Nickname: "DEMO_BUYER", SiteID: "MLA", FirstName: "Demo", LastName: "Buyer",
	}, nil)
	if err != nil {
		return Demo{}, err
	}
	return d, nil
}
