package fees

import "slices"

// ListingTypeIDs are the listing types of the spec, from the most to the
// least exposed. Item publication accepts only these.
var ListingTypeIDs = []string{"gold_pro", "gold_premium", "gold_special", "gold", "silver", "bronze", "free"}

// IsListingType reports whether id is one of ListingTypeIDs.
func IsListingType(id string) bool { return slices.Contains(ListingTypeIDs, id) }
