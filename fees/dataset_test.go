package fees_test

import (
	"testing"

	"github.com/marketplace/marketplace/fees"
	"github.com/marketplace/marketplace/money"
)

// TestDataset_ShippedFeeFigures is the one place the shipped fee figures
// are written down: each rule of the dataset, as the lookups serve it
// (percentages, fixed fee and its threshold, listing fee). The rule tests
// take their figures from the dataset instead, so a change of the data
// changes this table alone.
func TestDataset_ShippedFeeFigures(t *testing.T) {
	type row struct{ site, lt, category, meli, financing, fixed, below, listing string }
	rows := []row{
		{"MLA", "gold_pro", "general", "13", "23", "200", "10000", "0"},
		{"MLA", "gold_premium", "general", "0", "0", "0", "0", "0"},
		{"MLA", "gold_special", "general", "13", "0", "200", "10000", "0"},
		{"MLA", "gold", "general", "0", "0", "0", "0", "0"},
		{"MLA", "silver", "general", "0", "0", "0", "0", "0"},
		{"MLA", "bronze", "general", "0", "0", "0", "0", "0"},
		{"MLA", "free", "general", "0", "0", "0", "0", "0"},
		{"MLB", "gold_pro", "general", "14", "5", "6", "79", "0"},
		{"MLB", "gold_special", "general", "14", "0", "6", "79", "0"},
		{"MLB", "free", "general", "0", "0", "0", "0", "0"},
		{"MLM", "gold_pro", "general", "15", "4.5", "25", "299", "0"},
		{"MLM", "gold_special", "general", "15", "0", "25", "299", "0"},
		{"MLM", "free", "general", "0", "0", "0", "0", "0"},
		{"MLC", "gold_pro", "general", "14", "4", "700", "9990", "0"},
		{"MLC", "gold_special", "general", "14", "0", "700", "9990", "0"},
		{"MLC", "free", "general", "0", "0", "0", "0", "0"},
		{"MCO", "gold_pro", "general", "13", "4", "2000", "60000", "0"},
		{"MCO", "gold_special", "general", "13", "0", "2000", "60000", "0"},
		{"MCO", "free", "general", "0", "0", "0", "0", "0"},
		{"MLU", "gold_pro", "general", "11", "4", "0", "0", "0"},
		{"MLU", "gold_special", "general", "11", "0", "0", "0", "0"},
		{"MLU", "free", "general", "0", "0", "0", "0", "0"},
		{"MPE", "gold_pro", "general", "12", "4", "0", "0", "0"},
		{"MPE", "gold_special", "general", "12", "0", "0", "0", "0"},
		{"MPE", "free", "general", "0", "0", "0", "0", "0"},
		{"MEC", "gold_pro", "general", "12", "4", "0", "0", "0"},
		{"MEC", "gold_special", "general", "12", "0", "0", "0", "0"},
		{"MEC", "free", "general", "0", "0", "0", "0", "0"},
		{"MLV", "gold_pro", "general", "10", "4", "0", "0", "0"},
		{"MLV", "gold_special", "general", "10", "0", "0", "0", "0"},
		{"MLV", "free", "general", "0", "0", "0", "0", "0"},
		{"MLA", "gold_pro", "MLA1051", "11.5", "23", "200", "10000", "0"},
		{"MLA", "gold_special", "MLA1051", "11.5", "0", "200", "10000", "0"},
		{"MLA", "gold_pro", "MLA1648", "12.5", "23", "200", "10000", "0"},
		{"MLA", "gold_special", "MLA1648", "12.5", "0", "200", "10000", "0"},
		{"MLA", "gold_pro", "MLA1403", "10", "23", "200", "10000", "0"},
		{"MLA", "gold_special", "MLA1403", "10", "0", "200", "10000", "0"},
	}
	e := newEnv(t)
	if n := len(shippedRules(t)); n != len(rows) {
		t.Fatalf("the dataset has %d rules, the table %d", n, len(rows))
	}
	for _, r := range rows {
		category := ""
		if r.category != "general" {
			category = r.category
		}
		// Just below the threshold (or at 1 with none) the fixed fee applies;
		// at the threshold it does not.
		below := money.MustParse(r.below)
		price := money.FromInt(1)
		if below.Sign() > 0 {
			price = below.Sub(money.MustParse("0.01"))
		}
		lp := e.one(t, r.site, r.lt, fees.Query{Price: price.String(), CategoryID: category})
		d := lp.SaleFeeDetails
		got := row{r.site, r.lt, r.category, d.MeliPercentageFee.String(), d.FinancingAddOnFee.String(),
			d.FixedFee.String(), r.below, lp.ListingFeeAmount.String()}
		if got != r {
			t.Errorf("served %v, want %v", got, r)
		}
		if below.Sign() > 0 {
			at := e.one(t, r.site, r.lt, fees.Query{Price: r.below, CategoryID: category})
			if !at.SaleFeeDetails.FixedFee.IsZero() {
				t.Errorf("%s %s %s: fixed fee %s at the threshold %s, want 0", r.site, r.lt, r.category, at.SaleFeeDetails.FixedFee, r.below)
			}
		}
	}
}
