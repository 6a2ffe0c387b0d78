package stock

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/binrec"
	"github.com/marketplace/marketplace/storage"
)

// User products are read on every stock read and write, and items on every
// item read, question and search result, so both are stored in a compact
// binary form rather than JSON (decoding JSON was most of a search's time).
// A user product:
//
//	format byte (1) | version varint | user id varint | flags byte (bit 0:
//	multi-origin) | plain quantity varint | id string | site id string |
//	location count uvarint | per location: store id string, network node id
//	string, quantity varint
//
// where a string is its uvarint length followed by its bytes.
//
// An item: format byte (1) | seller id varint | the strings ID, SiteID,
// Title, CategoryID, Price, BasePrice, CurrencyID, ListingTypeID, Condition,
// Status, UserProductID, Permalink, Thumbnail, DateCreated, LastUpdated |
// channel count uvarint | each channel string | flags byte (bit 0: catalog
// listing, bit 1: has a catalog product, bit 2: has a parent item) |
// catalog product id string | sold quantity varint | sub-status count
// uvarint | each sub-status string | parent item id string | relisted-as
// item id string.
// AvailableQuantity is not stored: it is read from the user product. Format
// 1 records (without the catalog fields) are rewritten in format 2 by
// RecordsMigration (migrate.go); format 2 records (without the sale fields
// that follow the catalog product) are read as they are, with no sales, no
// sub-status and no parent, and written in format 3 at their next change.
const (
	userProductFormat = 1
	itemFormatCatalog = 2
	itemFormat        = 3
)

func itemStrings(it *Item) []*string {
	return []*string{&it.ID, &it.SiteID, &it.Title, &it.CategoryID, (*string)(&it.Price), (*string)(&it.BasePrice),
		&it.CurrencyID, &it.ListingTypeID, &it.Condition, &it.Status, &it.UserProductID, &it.Permalink,
		&it.Thumbnail, &it.DateCreated, &it.LastUpdated}
}

func encodeItem(it Item) []byte {
	b := make([]byte, 0, 256)
	b = append(b, itemFormat)
	b = binary.AppendVarint(b, it.SellerID)
	for _, f := range itemStrings(&it) {
		b = binrec.AppendString(b, *f)
	}
	b = binary.AppendUvarint(b, uint64(len(it.Channels)))
	for _, c := range it.Channels {
		b = binrec.AppendString(b, c)
	}
	var flags byte
	if it.CatalogListing {
		flags |= 1
	}
	var cp string
	if it.CatalogProductID != nil {
		flags |= 2
		cp = *it.CatalogProductID
	}
	if it.ParentItemID != nil {
		flags |= 4
	}
	b = append(b, flags)
	b = binrec.AppendString(b, cp)
	b = binary.AppendVarint(b, it.SoldQuantity)
	b = binary.AppendUvarint(b, uint64(len(it.SubStatus)))
	for _, st := range it.SubStatus {
		b = binrec.AppendString(b, st)
	}
	var parent string
	if it.ParentItemID != nil {
		parent = *it.ParentItemID
	}
	b = binrec.AppendString(b, parent)
	return binrec.AppendString(b, it.RelistedAs)
}

func decodeItem(b []byte) (Item, error) {
	d := binrec.NewDecoder(b)
	format := d.Byte()
	if d.Err() == nil && format != itemFormat && format != itemFormatCatalog {
		return Item{}, fmt.Errorf("item record format %d unknown", format)
	}
	var it Item
	it.SellerID = d.Varint()
	for _, f := range itemStrings(&it) {
		*f = d.String()
	}
	n := d.Count()
	if d.Err() != nil {
		return Item{}, d.Err()
	}
	it.Channels = make([]string, 0, n)
	for i := 0; i < n; i++ {
		it.Channels = append(it.Channels, d.String())
	}
	flags := d.Byte()
	cp := d.String()
	it.CatalogListing = flags&1 != 0
	if flags&2 != 0 {
		it.CatalogProductID = &cp
	}
	it.SubStatus = []string{}
	if format == itemFormat {
		it.SoldQuantity = d.Varint()
		n := d.Count()
		if d.Err() != nil {
			return Item{}, d.Err()
		}
		for i := 0; i < n; i++ {
			it.SubStatus = append(it.SubStatus, d.String())
		}
		parent := d.String()
		if flags&4 != 0 {
			it.ParentItemID = &parent
		}
		it.RelistedAs = d.String()
	}
	if d.Err() != nil {
		return Item{}, d.Err()
	}
	return it, nil
}

func putItem(tx storage.Tx, it Item) error { return tx.Set(itemKey(it.ID), encodeItem(it)) }

// getItemRecord reads the stored item, without its quantity.
func getItemRecord(tx storage.Tx, id string) (Item, error) {
	// Every ask reads its item, which is seldom written: prefetched, a
	// store that keeps the newest values of such keys in memory answers
	// it from there (storage/badger).
	if err := storage.Prefetch(tx, itemKey(id)); err != nil {
		return Item{}, errs.Internalf(err, "read item %s", id)
	}
	b, err := tx.Get(itemKey(id))
	if errors.Is(err, storage.ErrNotFound) {
		return Item{}, errs.NotFoundf("Item with id %s not found", id)
	}
	if err != nil {
		return Item{}, errs.Internalf(err, "read item %s", id)
	}
	it, err := decodeItem(b)
	if err != nil {
		return Item{}, errs.Internalf(err, "decode item %s", id)
	}
	return it, nil
}

func encodeUserProduct(up UserProduct) []byte {
	b := make([]byte, 0, 64+32*len(up.Locations))
	b = append(b, userProductFormat)
	b = binary.AppendVarint(b, up.Version)
	b = binary.AppendVarint(b, up.UserID)
	var flags byte
	if up.MultiOrigin {
		flags |= 1
	}
	b = append(b, flags)
	b = binary.AppendVarint(b, up.PlainQuantity)
	b = binrec.AppendString(b, up.ID)
	b = binrec.AppendString(b, up.SiteID)
	b = binary.AppendUvarint(b, uint64(len(up.Locations)))
	for _, l := range up.Locations {
		b = binrec.AppendString(b, l.StoreID)
		b = binrec.AppendString(b, l.NetworkNodeID)
		b = binary.AppendVarint(b, l.Quantity)
	}
	return b
}

func decodeUserProduct(b []byte) (UserProduct, error) {
	d := binrec.NewDecoder(b)
	if f := d.Byte(); d.Err() == nil && f != userProductFormat {
		return UserProduct{}, fmt.Errorf("user product record format %d unknown", f)
	}
	var up UserProduct
	up.Version = d.Varint()
	up.UserID = d.Varint()
	up.MultiOrigin = d.Byte()&1 != 0
	up.PlainQuantity = d.Varint()
	up.ID = d.String()
	up.SiteID = d.String()
	n := d.Count()
	if d.Err() != nil {
		return UserProduct{}, d.Err()
	}
	up.Locations = make([]StockLocation, 0, n)
	for i := 0; i < n; i++ {
		l := StockLocation{Type: LocationTypeSellerWarehouse, StoreID: d.String(), NetworkNodeID: d.String()}
		l.Quantity = d.Varint()
		up.Locations = append(up.Locations, l)
	}
	if d.Err() != nil {
		return UserProduct{}, d.Err()
	}
	return up, nil
}

func getUserProduct(tx storage.Tx, id string) (UserProduct, error) {
	b, err := tx.Get(userProductKey(id))
	if errors.Is(err, storage.ErrNotFound) {
		return UserProduct{}, errs.NotFoundf("User product not found: %s", id)
	}
	if err != nil {
		return UserProduct{}, errs.Internalf(err, "read user product %s", id)
	}
	up, err := decodeUserProduct(b)
	if err != nil {
		return UserProduct{}, errs.Internalf(err, "decode user product %s", id)
	}
	return up, nil
}

func putUserProduct(tx storage.Tx, up UserProduct) error {
	return tx.Set(userProductKey(up.ID), encodeUserProduct(up))
}
