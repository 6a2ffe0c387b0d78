package fees

import "github.com/marketplace/marketplace/internal/keycodec"

// Key layout of fees. Every key starts with "fees".
//
//	fees/version                                   -> version of the embedded dataset last loaded (JSON integer)
//	fees/rev                                       -> revision of the fee records: a random token, replaced in
//	                                                  the transaction of every write of a listing type or rule
//	fees/ltype/<site_id>/<listing_type_id>         -> ListingType (JSON)
//	fees/rule/<site_id>/<listing_type_id>/<category> -> Rule (JSON); category is "general" or a category id
//	fees/imported/<kind>/<id>                      -> empty; imported by a user, kept over newer embedded data

func versionKey() []byte { return keycodec.New("fees/version") }

func revKey() []byte { return keycodec.New("fees/rev") }

func listingTypeKey(siteID, id string) []byte {
	return keycodec.New("fees/ltype").Str(siteID).Str(id)
}

func listingTypePrefix(siteID string) []byte { return keycodec.New("fees/ltype").Str(siteID) }

func ruleKey(siteID, listingTypeID, category string) []byte {
	return keycodec.New("fees/rule").Str(siteID).Str(listingTypeID).Str(category)
}

func rulePrefix(siteID, listingTypeID string) []byte {
	return keycodec.New("fees/rule").Str(siteID).Str(listingTypeID)
}

func importedKey(kind, id string) []byte { return keycodec.New("fees/imported").Str(kind).Str(id) }
