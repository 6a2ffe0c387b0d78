// Package catalog holds domains and catalog products: the shared product
// sheets (attributes, pictures, pickers, main features) that listings can
// point to.
//
// Domains and products are reference data: an embedded dataset loaded on open
// (reference.go) and records that users import. The rules are the spec's
// shapes, the inactive-product rule (no pictures, pickers or main features,
// an empty short description) and the parent/child links between products.
package catalog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/geo"
	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/paging"
	"github.com/marketplace/marketplace/storage"
)

// Product statuses.
const (
	StatusActive   = "active"
	StatusInactive = "inactive"
)

// TimeLayout is how last_updated is written: ISO 8601 in UTC with
// milliseconds, as the public API shows it.
const TimeLayout = "2006-01-02T15:04:05.000Z"

// Domain is a family of products of one site, such as MLA-CELLPHONES.
type Domain struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// Attribute is one entry of a product's technical sheet.
type Attribute struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	ValueID   string `json:"value_id"`
	ValueName string `json:"value_name"`
}

// Picture is one picture of a product.
type Picture struct {
	ID                 string   `json:"id"`
	URL                string   `json:"url"`
	SuggestedForPicker []string `json:"suggested_for_picker"`
	MaxWidth           int      `json:"max_width"`
	MaxHeight          int      `json:"max_height"`
}

// Picker is one choice a buyer makes between sibling products (a color, a
// memory size).
type Picker struct {
	PickerID   string          `json:"picker_id"`
	PickerName string          `json:"picker_name"`
	Products   []PickerProduct `json:"products"`
}

// PickerProduct is one option of a picker.
type PickerProduct struct {
	ProductID   string   `json:"product_id"`
	PickerLabel string   `json:"picker_label"`
	PictureID   string   `json:"picture_id"`
	Thumbnail   string   `json:"thumbnail"`
	Tags        []string `json:"tags"`
	Permalink   string   `json:"permalink"`
}

// MainFeature is one highlighted feature of a product.
type MainFeature struct {
	Text     string          `json:"text"`
	Type     string          `json:"type"`
	Metadata FeatureMetadata `json:"metadata"`
}

// FeatureMetadata ties a main feature to an attribute.
type FeatureMetadata struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// ShortDescription is a product's summary text.
type ShortDescription struct {
	Type    string `json:"type"`
	Content string `json:"content"`
}

// Product is a catalog product as it is stored and imported. ChildrenIDs is
// not stored: it is derived from the children's parent_id.
type Product struct {
	ID               string           `json:"id"`
	Status           string           `json:"status"`
	DomainID         string           `json:"domain_id"`
	Permalink        string           `json:"permalink"`
	Name             string           `json:"name"`
	BuyBoxWinner     json.RawMessage  `json:"buy_box_winner"`
	Pickers          []Picker         `json:"pickers"`
	Pictures         []Picture        `json:"pictures"`
	MainFeatures     []MainFeature    `json:"main_features"`
	Attributes       []Attribute      `json:"attributes"`
	ShortDescription ShortDescription `json:"short_description"`
	ParentID         string           `json:"parent_id"`
	ChildrenIDs      []string         `json:"children_ids,omitempty"`
	LastUpdated      string           `json:"last_updated"`
}

// ProductView is the answer of a product lookup by id: the product after
// the inactive rule (no pictures, pickers or main features, an empty short
// description) with its children_ids. It encodes as the spec's "Catalog
// product by id" table, in its order: Product's fields but last_updated,
// with children_ids always (MarshalJSON).
type ProductView struct {
	Product
}

// MarshalJSON encodes v as the by-id lookup answers it. Product's encoding is
// the stored and imported record's, which leaves out an empty children_ids
// and ends with last_updated; the answer ends with children_ids, an empty
// list when there are none, and has no last_updated.
func (v ProductView) MarshalJSON() ([]byte, error) {
	p := v.Product
	children := p.ChildrenIDs
	if children == nil {
		children = []string{}
	}
	p.ChildrenIDs, p.LastUpdated = nil, ""
	// HTML characters are left as they are: the encoder that called this
	// method escapes them or not, as it was told.
	b, err := encodeJSON(p)
	if err != nil {
		return nil, err
	}
	const tail = `"last_updated":""}`
	if !bytes.HasSuffix(b, []byte(tail)) {
		return nil, fmt.Errorf("encode product %s: unexpected tail", p.ID)
	}
	c, err := encodeJSON(children)
	if err != nil {
		return nil, err
	}
	b = append(b[:len(b)-len(tail)], `"children_ids":`...)
	b = append(b, c...)
	return append(b, '}'), nil
}

// Image is one element of images in the domain product list.
type Image struct {
	ID  string `json:"id"`
	URL string `json:"url"`
}

// ListProduct is a product in the list shape of a domain's products.
type ListProduct struct {
	ID          string      `json:"id"`
	DomainID    string      `json:"domain_id"`
	Name        string      `json:"name"`
	ChildrenIDs []string    `json:"children_ids"`
	Attributes  []Attribute `json:"attributes"`
	Images      []Image     `json:"images"`
	LastUpdated string      `json:"last_updated"`
}

// ProductPage is one window of a domain's products and their total.
type ProductPage struct {
	Products []ListProduct
	Total    int
}

// Service answers domain and product lookups.
type Service struct {
	store storage.Store
	sites *geo.Service
	clock clock.Clock
}

// New returns the catalog service. clk stamps imported records that carry
// no last_updated; sites are known through g, over the same store.
func New(store storage.Store, clk clock.Clock, g *geo.Service) *Service {
	return &Service{store: store, sites: g, clock: clk}
}

// Domains returns the domains of site in id order. A site the catalog holds no
// domain for is checked with geo: a known site answers an empty list. Errors:
// NotFound (unknown site).
func (s *Service) Domains(ctx context.Context, siteID string) ([]Domain, error) {
	if !isSiteID(siteID) {
		return nil, errs.NotFoundf("Site not found: %s", siteID)
	}
	out := []Domain{}
	err := s.store.View(ctx, func(tx storage.Tx) error {
		out = out[:0]
		it := tx.Iterate(storage.Prefix(siteDomainPrefix(siteID)))
		defer it.Close()
		for ; it.Valid(); it.Next() {
			b, err := it.Value()
			if err != nil {
				return err
			}
			var d Domain
			if err := json.Unmarshal(b, &d); err != nil {
				return errs.Internalf(err, "decode domain")
			}
			out = append(out, d)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		if _, err := s.sites.Site(ctx, siteID); err != nil {
			if errs.Is(err, errs.NotFound) {
				return nil, errs.NotFoundf("Site not found: %s", siteID)
			}
			return nil, err
		}
	}
	return out, nil
}

// DomainProducts returns the window [offset, offset+limit) of the products of
// domainID in product id order, with their total. Inactive products are
// listed with no images. Errors: NotFound (unknown domain), Invalid (negative
// limit or offset).
func (s *Service) DomainProducts(ctx context.Context, domainID string, limit, offset int) (ProductPage, error) {
	if err := paging.Check(offset, limit); err != nil {
		return ProductPage{}, err
	}
	var page ProductPage
	err := s.store.View(ctx, func(tx storage.Tx) error {
		page = ProductPage{Products: []ListProduct{}}
		prefix := domainProductPrefix(domainID)
		// Opened before the domain is read: on a backend at network
		// distance its first page goes with that read.
		it := tx.Iterate(storage.Prefix(prefix))
		defer it.Close()
		if _, err := getDomain(tx, domainID); err != nil {
			return err
		}
		var ids []string
		for ; it.Valid(); it.Next() {
			if page.Total >= offset && len(ids) < limit {
				ids = append(ids, keycodec.Read(it.Key()[len(prefix):]).Str())
			}
			page.Total++
		}
		products, err := getProducts(tx, ids)
		for _, p := range products {
			page.Products = append(page.Products, p.listShape())
		}
		return err
	})
	if err != nil {
		return ProductPage{}, err
	}
	return page, nil
}

// Product returns the product with id as the by-id lookup shows it: an
// inactive product has null pictures, pickers and main_features and an empty
// short_description. Errors: NotFound.
func (s *Service) Product(ctx context.Context, id string) (ProductView, error) {
	var v ProductView
	err := s.store.View(ctx, func(tx storage.Tx) error {
		p, err := GetProduct(tx, id)
		if err != nil {
			return err
		}
		v = p.view()
		return nil
	})
	return v, err
}

// ProductJSON returns the same answer as Product, encoded as JSON (HTML
// characters not escaped). It reads the view rendered when the product was
// written and adds children_ids, so that the most frequent lookup decodes
// nothing. Errors: NotFound.
func (s *Service) ProductJSON(ctx context.Context, id string) ([]byte, error) {
	var out []byte
	err := s.store.View(ctx, func(tx storage.Tx) error {
		if _, ok := productSite(id); !ok {
			return errs.NotFoundf("Product not found: %s", id)
		}
		head, err := tx.Get(productViewKey(id))
		if errors.Is(err, storage.ErrNotFound) {
			return errs.NotFoundf("Product not found: %s", id)
		}
		if err != nil {
			return errs.Internalf(err, "read product view %s", id)
		}
		children, err := childrenOf(tx, id)
		if err != nil {
			return err
		}
		out = appendChildren(head, children)
		return nil
	})
	return out, err
}

// renderViewHead encodes p's by-id view without its final children_ids
// value: children_ids is the last field of the view and changes whenever a
// child is written, so it is appended at read time.
func renderViewHead(p Product) ([]byte, error) {
	v := p.view()
	v.ChildrenIDs = []string{}
	b, err := encodeJSON(v)
	if err != nil {
		return nil, err
	}
	const tail = `"children_ids":[]}`
	if !bytes.HasSuffix(b, []byte(tail)) {
		return nil, fmt.Errorf("render product %s: unexpected view tail", p.ID)
	}
	return b[:len(b)-len(tail)+len(`"children_ids":`)], nil
}

func appendChildren(head []byte, children []string) []byte {
	out := make([]byte, 0, len(head)+2+len(children)*16)
	out = append(out, head...)
	out = append(out, '[')
	for i, c := range children {
		if i > 0 {
			out = append(out, ',')
		}
		// Product ids are validated as a site id and digits: no escaping needed.
		out = append(out, '"')
		out = append(out, c...)
		out = append(out, '"')
	}
	return append(out, ']', '}')
}

// encodeJSON encodes v as the HTTP answers do: HTML characters kept as they
// are, no trailing newline.
func encodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// GetProduct reads the product with id inside tx, with its children_ids.
// Errors: NotFound.
func GetProduct(tx storage.Tx, id string) (Product, error) {
	if _, ok := productSite(id); !ok {
		return Product{}, errs.NotFoundf("Product not found: %s", id)
	}
	var p Product
	if err := kv.GetJSON(tx, productKey(id), &p); err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			return Product{}, errs.NotFoundf("Product not found: %s", id)
		}
		return Product{}, errs.Internalf(err, "read product %s", id)
	}
	children, err := childrenOf(tx, id)
	if err != nil {
		return Product{}, err
	}
	p.ChildrenIDs = children
	return p, nil
}

// getProducts is GetProduct of each of ids, read together: on a backend
// at network distance, the products and the first pages of their children
// lists in one round trip.
func getProducts(tx storage.Tx, ids []string) ([]Product, error) {
	keys := make([][]byte, 0, len(ids))
	children := make([]storage.Iterator, len(ids))
	defer func() {
		for _, it := range children {
			if it != nil {
				it.Close()
			}
		}
	}()
	for i, id := range ids {
		if _, ok := productSite(id); ok {
			keys = append(keys, productKey(id))
			children[i] = tx.Iterate(storage.Prefix(childPrefix(id)))
		}
	}
	if err := storage.Prefetch(tx, keys...); err != nil {
		return nil, err
	}
	out := make([]Product, 0, len(ids))
	for i, id := range ids {
		if children[i] == nil {
			return nil, errs.NotFoundf("Product not found: %s", id)
		}
		var p Product
		if err := kv.GetJSON(tx, productKey(id), &p); err != nil {
			if errors.Is(err, storage.ErrNotFound) {
				return nil, errs.NotFoundf("Product not found: %s", id)
			}
			return nil, errs.Internalf(err, "read product %s", id)
		}
		var err error
		if p.ChildrenIDs, err = childrenIn(children[i], id); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// GetDomain reads the domain with id inside tx. Errors: NotFound.
func GetDomain(tx storage.Tx, id string) (Domain, error) { return getDomain(tx, id) }

func getDomain(tx storage.Tx, id string) (Domain, error) {
	site, ok := domainSite(id)
	if !ok {
		return Domain{}, errs.NotFoundf("Domain not found: %s", id)
	}
	var d Domain
	if err := kv.GetJSON(tx, domainKey(site, id), &d); err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			return Domain{}, errs.NotFoundf("Domain not found: %s", id)
		}
		return Domain{}, errs.Internalf(err, "read domain %s", id)
	}
	return d, nil
}

func childrenOf(tx storage.Tx, parentID string) ([]string, error) {
	it := tx.Iterate(storage.Prefix(childPrefix(parentID)))
	defer it.Close()
	return childrenIn(it, parentID)
}

// childrenIn reads the children ids of parentID from it, an iterator over
// childPrefix(parentID).
func childrenIn(it storage.Iterator, parentID string) ([]string, error) {
	prefix := childPrefix(parentID)
	out := []string{}
	for ; it.Valid(); it.Next() {
		r := keycodec.Read(it.Key()[len(prefix):])
		id := r.Str()
		if err := r.Err(); err != nil {
			return nil, errs.Internalf(err, "read child key")
		}
		out = append(out, id)
	}
	return out, nil
}

// view applies the inactive rule and fills the arrays that are never null.
func (p Product) view() ProductView {
	v := ProductView{p}
	v.LastUpdated = ""
	if len(v.BuyBoxWinner) == 0 {
		v.BuyBoxWinner = nil
	}
	if v.Attributes == nil {
		v.Attributes = []Attribute{}
	}
	if v.ChildrenIDs == nil {
		v.ChildrenIDs = []string{}
	}
	if p.Status == StatusInactive {
		v.Pictures, v.Pickers, v.MainFeatures = nil, nil, nil
		v.ShortDescription = ShortDescription{}
	} else {
		// An active product always answers arrays, so that clients can tell
		// "no pictures" from "inactive".
		if v.Pictures == nil {
			v.Pictures = []Picture{}
		}
		if v.Pickers == nil {
			v.Pickers = []Picker{}
		}
		if v.MainFeatures == nil {
			v.MainFeatures = []MainFeature{}
		}
	}
	return v
}

// listShape is p as the domain list shows it; images are the pictures' ids
// and urls, none for an inactive product.
func (p Product) listShape() ListProduct {
	l := ListProduct{ID: p.ID, DomainID: p.DomainID, Name: p.Name, ChildrenIDs: p.ChildrenIDs,
		Attributes: p.Attributes, Images: []Image{}, LastUpdated: p.LastUpdated}
	if l.ChildrenIDs == nil {
		l.ChildrenIDs = []string{}
	}
	if l.Attributes == nil {
		l.Attributes = []Attribute{}
	}
	if p.Status != StatusInactive {
		for _, pic := range p.Pictures {
			l.Images = append(l.Images, Image{ID: pic.ID, URL: pic.URL})
		}
	}
	return l
}

// domainSite returns the site prefix of a domain id of the form
// <SITE>-<NAME>.
func domainSite(id string) (string, bool) {
	site, name, ok := strings.Cut(id, "-")
	if !ok || !isSiteID(site) || !isDomainName(name) {
		return "", false
	}
	return site, true
}

func isSiteID(s string) bool {
	if len(s) != 3 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 'A' || s[i] > 'Z' {
			return false
		}
	}
	return true
}

func isDomainName(s string) bool {
	if s == "" || len(s) > 120 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// productSite returns the site prefix of a product id such as MLA15149561.
func productSite(id string) (string, bool) {
	if len(id) < 4 || len(id) > 32 || !isSiteID(id[:3]) {
		return "", false
	}
	for i := 3; i < len(id); i++ {
		if id[i] < '0' || id[i] > '9' {
			return "", false
		}
	}
	return id[:3], true
}
