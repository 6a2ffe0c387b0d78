package fees_test

import (
	"context"
	"fmt"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/fees"
	"github.com/marketplace/marketplace/storage/memory"
)

// Example reads the listing fee of one listing type on MLA for a price, as
// GET /sites/MLA/listing_prices?price=10630&listing_type_id=gold_pro does:
// fees are exact decimals, rounded by the currency's decimal places.
func Example() {
	ctx := context.Background()
	m, err := marketplace.New(memory.New(), marketplace.Options{})
	if err != nil {
		panic(err)
	}
	defer m.Close()

	p, err := m.Fees.ListingPrice(ctx, "MLA", "gold_pro", fees.Query{Price: "10630"})
	if err != nil {
		panic(err)
	}
	fmt.Println(p.ListingTypeID, p.ListingTypeName, p.CurrencyID)
	fmt.Println("sale fee:", p.SaleFeeAmount, "listing fee:", p.ListingFeeAmount)
	// Output:
	// gold_pro Premium ARS
	// sale fee: 3826.8 listing fee: 0
}
