package catalog

import "github.com/marketplace/marketplace/internal/keycodec"

// Key layout of catalog. Every key starts with "cat".
//
//	cat/version                          -> embedded dataset version loaded (uint64)
//	cat/domain/<site_id>/<domain_id>     -> Domain (JSON); a site's domains in id order
//	cat/product/<product_id>             -> Product (JSON, without children_ids)
//	cat/pview/<product_id>               -> the by-id answer rendered at write time, up to
//	                                        "children_ids": (children are appended on read)
//	cat/dprod/<domain_id>/<product_id>   -> empty; a domain's products in id order
//	cat/child/<parent_id>/<product_id>   -> empty; children_ids of a product, derived from parent_id
//	cat/imported/<kind>/<id>             -> empty; records written by an import, which a newer
//	                                        embedded dataset does not overwrite
//	cat/catversion                       -> embedded category dataset version loaded (uint64)
//	cat/category/<category_id>           -> Category (JSON)
//	cat/catroot/<site_id>/<category_id>  -> empty; a site's root categories
//	cat/catchild/<parent_id>/<category_id> -> empty; a category's children, derived from parent_id

func versionKey() []byte { return keycodec.New("cat/version") }

func siteDomainPrefix(siteID string) []byte { return keycodec.New("cat/domain").Str(siteID) }

func domainKey(siteID, domainID string) []byte {
	return keycodec.Key(siteDomainPrefix(siteID)).Str(domainID)
}

func productKey(id string) []byte { return keycodec.New("cat/product").Str(id) }

func productViewKey(id string) []byte { return keycodec.New("cat/pview").Str(id) }

func domainProductPrefix(domainID string) []byte { return keycodec.New("cat/dprod").Str(domainID) }

func domainProductKey(domainID, productID string) []byte {
	return keycodec.Key(domainProductPrefix(domainID)).Str(productID)
}

func childPrefix(parentID string) []byte { return keycodec.New("cat/child").Str(parentID) }

func childKey(parentID, childID string) []byte {
	return keycodec.Key(childPrefix(parentID)).Str(childID)
}

func importedKey(kind, id string) []byte { return keycodec.New("cat/imported").Str(kind).Str(id) }

func categoryVersionKey() []byte { return keycodec.New("cat/catversion") }

func categoryKey(id string) []byte { return keycodec.New("cat/category").Str(id) }

func categoryRootPrefix(siteID string) []byte { return keycodec.New("cat/catroot").Str(siteID) }

func categoryChildPrefix(parentID string) []byte { return keycodec.New("cat/catchild").Str(parentID) }

// categoryPlaceKey is the key that lists id under its parent, or among the
// site's roots when it has none.
func categoryPlaceKey(siteID, parentID, id string) []byte {
	if parentID == "" {
		return keycodec.Key(categoryRootPrefix(siteID)).Str(id)
	}
	return keycodec.Key(categoryChildPrefix(parentID)).Str(id)
}
