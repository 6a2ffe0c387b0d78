package catalog

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/geo"
	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/storage"
)

// Record kinds of this package in a reference document.
const (
	KindDomain  = "domain"
	KindProduct = "product"
)

//go:embed data/catalog.json
var builtinJSON []byte

// The category tree ships as a dataset of its own, with its own version, so
// that it can grow without reloading the domains and products.
//
//go:embed data/categories.json
var builtinCategoriesJSON []byte

// Dataset is the format of the embedded dataset: the records of a reference
// document and the dataset's version. A version greater than the one stored
// is loaded on open; an equal or older one is skipped.
type Dataset struct {
	Version uint64          `json:"version"`
	Records []DatasetRecord `json:"records"`
}

// DatasetRecord is one record of a Dataset, as in a reference document.
type DatasetRecord struct {
	Kind string          `json:"kind"`
	Data json.RawMessage `json:"data"`
}

// BuiltinDataset returns the embedded dataset.
func BuiltinDataset() (Dataset, error) {
	var d Dataset
	if err := json.Unmarshal(builtinJSON, &d); err != nil {
		return Dataset{}, fmt.Errorf("decode embedded catalog dataset: %w", err)
	}
	return d, nil
}

// BuiltinCategories returns the embedded category dataset.
func BuiltinCategories() (Dataset, error) {
	var d Dataset
	if err := json.Unmarshal(builtinCategoriesJSON, &d); err != nil {
		return Dataset{}, fmt.Errorf("decode embedded category dataset: %w", err)
	}
	return d, nil
}

// LoadBuiltin loads the reference data embedded in the engine into storage,
// once per dataset version.
func (s *Service) LoadBuiltin(ctx context.Context) error {
	d, err := BuiltinDataset()
	if err != nil {
		return err
	}
	if err := s.LoadDataset(ctx, d); err != nil {
		return err
	}
	c, err := BuiltinCategories()
	if err != nil {
		return err
	}
	return s.LoadCategories(ctx, c)
}

// LoadCategories loads a category dataset unless one of the same or a newer
// version is already loaded, as LoadDataset does for domains and products.
// Errors: Invalid (a record of d breaks a rule).
func (s *Service) LoadCategories(ctx context.Context, d Dataset) error {
	return s.loadVersioned(ctx, categoryVersionKey(), "category", d)
}

// LoadDataset loads d unless a dataset of the same or a newer version is
// already loaded. Records that an import wrote keep the imported version;
// records of an older dataset that d no longer has stay. It is all or
// nothing. Errors: Invalid (a record of d breaks a rule).
func (s *Service) LoadDataset(ctx context.Context, d Dataset) error {
	return s.loadVersioned(ctx, versionKey(), "catalog", d)
}

func (s *Service) loadVersioned(ctx context.Context, key []byte, name string, d Dataset) error {
	return s.store.Update(ctx, func(tx storage.Tx) error {
		loaded, err := loadedVersionAt(tx, key)
		if err != nil {
			return err
		}
		if loaded >= d.Version {
			return nil
		}
		for i, rec := range d.Records {
			if _, err := s.upsert(tx, rec.Kind, rec.Data, false); err != nil {
				return fmt.Errorf("%s dataset record %d (%s): %w", name, i, rec.Kind, err)
			}
		}
		return tx.Set(key, keycodec.Raw().Uint(d.Version))
	})
}

// LoadedVersion returns the version of the embedded dataset last loaded (0
// when none).
func (s *Service) LoadedVersion(ctx context.Context) (uint64, error) {
	var v uint64
	err := s.store.View(ctx, func(tx storage.Tx) error {
		var err error
		v, err = loadedVersion(tx)
		return err
	})
	return v, err
}

func loadedVersion(tx storage.Tx) (uint64, error) { return loadedVersionAt(tx, versionKey()) }

func loadedVersionAt(tx storage.Tx, key []byte) (uint64, error) {
	b, err := tx.Get(key)
	if errors.Is(err, storage.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	r := keycodec.Read(b)
	v := r.Uint()
	if r.Err() != nil {
		return 0, fmt.Errorf("catalog dataset version: corrupt value")
	}
	return v, nil
}

// UpsertRecord writes one imported reference record of kind inside tx. It
// returns false when kind is not one of this package's kinds. An imported
// record is never overwritten by a later embedded dataset. Errors: Invalid.
func (s *Service) UpsertRecord(tx storage.Tx, kind string, data json.RawMessage) (bool, error) {
	return s.upsert(tx, kind, data, true)
}

func (s *Service) upsert(tx storage.Tx, kind string, data json.RawMessage, imported bool) (bool, error) {
	switch kind {
	case KindDomain:
		var d Domain
		if err := decodeRecord(data, &d); err != nil {
			return true, err
		}
		return true, s.putDomain(tx, d, imported)
	case KindProduct:
		var p Product
		if err := decodeRecord(data, &p); err != nil {
			return true, err
		}
		return true, s.putProduct(tx, p, imported)
	case KindCategory:
		c, err := decodeCategory(data)
		if err != nil {
			return true, err
		}
		return true, s.putCategory(tx, c, imported)
	}
	return false, nil
}

// decodeRecord decodes one record's data. Unknown fields are ignored, so that
// a product copied from the public API imports as it is.
func decodeRecord(data json.RawMessage, v any) error {
	if len(bytes.TrimSpace(data)) == 0 || bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		return errs.Invalidf("The fields [data] are required for requested call")
	}
	if err := json.Unmarshal(data, v); err != nil {
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) && ute.Field != "" {
			return errs.Invalidf("The fields [%s] are invalid for requested call", ute.Field)
		}
		return errs.Invalidf("Malformed record data: %v", err)
	}
	return nil
}

func required(field string) error {
	return errs.Invalidf("The fields [%s] are required for requested call", field)
}

func invalid(field, why string) error {
	return errs.Invalidf("The fields [%s] are invalid for requested call: %s", field, why)
}

// skipBuiltin reports whether an embedded record must leave the stored one
// alone because an import wrote it.
func skipBuiltin(tx storage.Tx, imported bool, kind, id string) (bool, error) {
	if imported {
		return false, tx.Set(importedKey(kind, id), nil)
	}
	_, err := tx.Get(importedKey(kind, id))
	if err == nil {
		return true, nil
	}
	if errors.Is(err, storage.ErrNotFound) {
		return false, nil
	}
	return false, err
}

func (s *Service) putDomain(tx storage.Tx, d Domain, imported bool) error {
	d.Name = strings.TrimSpace(d.Name)
	if d.ID == "" {
		return required("id")
	}
	site, ok := domainSite(d.ID)
	if !ok {
		return invalid("id", fmt.Sprintf("%q is not of the form <SITE_ID>-<DOMAIN_NAME> (e.g. MLA-CELLPHONES)", d.ID))
	}
	if d.Name == "" {
		return required("name")
	}
	if len(d.Name) > 200 {
		return invalid("name", "longer than 200 characters")
	}
	if skip, err := skipBuiltin(tx, imported, KindDomain, d.ID); err != nil || skip {
		return err
	}
	return kv.SetJSON(tx, domainKey(site, d.ID), d)
}

func (s *Service) putProduct(tx storage.Tx, p Product, imported bool) error {
	if err := s.normalizeProduct(tx, &p); err != nil {
		return err
	}
	if skip, err := skipBuiltin(tx, imported, KindProduct, p.ID); err != nil || skip {
		return err
	}
	var old Product
	err := kv.GetJSON(tx, productKey(p.ID), &old)
	switch {
	case err == nil:
		if old.DomainID != p.DomainID {
			if err := tx.Delete(domainProductKey(old.DomainID, p.ID)); err != nil {
				return err
			}
		}
		if old.ParentID != "" && old.ParentID != p.ParentID {
			if err := tx.Delete(childKey(old.ParentID, p.ID)); err != nil {
				return err
			}
		}
	case !errors.Is(err, storage.ErrNotFound):
		return err
	}
	if err := tx.Set(domainProductKey(p.DomainID, p.ID), nil); err != nil {
		return err
	}
	if p.ParentID != "" {
		if err := tx.Set(childKey(p.ParentID, p.ID), nil); err != nil {
			return err
		}
	}
	head, err := renderViewHead(p)
	if err != nil {
		return err
	}
	if err := tx.Set(productViewKey(p.ID), head); err != nil {
		return err
	}
	return kv.SetJSON(tx, productKey(p.ID), p)
}

// normalizeProduct checks p and fills its defaults. children_ids is dropped:
// it is derived from the children's parent_id.
func (s *Service) normalizeProduct(tx storage.Tx, p *Product) error {
	if p.ID == "" {
		return required("id")
	}
	site, ok := productSite(p.ID)
	if !ok {
		return invalid("id", fmt.Sprintf("%q is not a site id followed by digits (e.g. MLA15149561)", p.ID))
	}
	p.Name = strings.TrimSpace(p.Name)
	if p.Name == "" {
		return required("name")
	}
	switch p.Status {
	case "":
		p.Status = StatusActive
	case StatusActive, StatusInactive:
	default:
		return invalid("status", fmt.Sprintf("%q is neither active nor inactive", p.Status))
	}
	if p.DomainID == "" {
		return required("domain_id")
	}
	if dsite, ok := domainSite(p.DomainID); ok && dsite != site {
		return invalid("domain_id", fmt.Sprintf("domain %s is not of the product's site %s", p.DomainID, site))
	}
	if _, err := getDomain(tx, p.DomainID); err != nil {
		if errs.Is(err, errs.NotFound) {
			return invalid("domain_id", fmt.Sprintf("domain %s does not exist; import it first", p.DomainID))
		}
		return err
	}
	if p.Permalink == "" {
		// The storefront of the product's site, www.<domain>; a site
		// without a domain leaves the permalink to the record.
		s, err := geo.GetSite(tx, site)
		if err != nil && !errs.Is(err, errs.NotFound) {
			return err
		}
		if s.Domain == "" {
			return required("permalink")
		}
		p.Permalink = "https://www." + s.Domain + "/p/" + p.ID
	} else if !isURL(p.Permalink) {
		return invalid("permalink", "not an http or https URL")
	}
	if p.ParentID != "" {
		psite, ok := productSite(p.ParentID)
		switch {
		case !ok:
			return invalid("parent_id", fmt.Sprintf("%q is not a product id", p.ParentID))
		case psite != site:
			return invalid("parent_id", fmt.Sprintf("parent %s is not of the product's site %s", p.ParentID, site))
		case p.ParentID == p.ID:
			return invalid("parent_id", "a product cannot be its own parent")
		}
	}
	p.ChildrenIDs = nil
	if err := normalizeBuyBox(p); err != nil {
		return err
	}
	for i := range p.Attributes {
		a := &p.Attributes[i]
		if a.ID == "" {
			return required(fmt.Sprintf("attributes[%d].id", i))
		}
		if a.Name == "" {
			return required(fmt.Sprintf("attributes[%d].name", i))
		}
	}
	if p.Attributes == nil {
		p.Attributes = []Attribute{}
	}
	for i := range p.Pictures {
		pic := &p.Pictures[i]
		if pic.ID == "" {
			return required(fmt.Sprintf("pictures[%d].id", i))
		}
		if !isURL(pic.URL) {
			return invalid(fmt.Sprintf("pictures[%d].url", i), "not an http or https URL")
		}
		if pic.MaxWidth < 0 || pic.MaxHeight < 0 {
			return invalid(fmt.Sprintf("pictures[%d]", i), "max_width and max_height must not be negative")
		}
		if pic.SuggestedForPicker == nil {
			pic.SuggestedForPicker = []string{}
		}
	}
	for i := range p.Pickers {
		pk := &p.Pickers[i]
		if pk.PickerID == "" {
			return required(fmt.Sprintf("pickers[%d].picker_id", i))
		}
		if pk.PickerName == "" {
			return required(fmt.Sprintf("pickers[%d].picker_name", i))
		}
		if pk.Products == nil {
			pk.Products = []PickerProduct{}
		}
		for j := range pk.Products {
			pp := &pk.Products[j]
			if _, ok := productSite(pp.ProductID); !ok {
				return invalid(fmt.Sprintf("pickers[%d].products[%d].product_id", i, j), fmt.Sprintf("%q is not a product id", pp.ProductID))
			}
			if pp.Tags == nil {
				pp.Tags = []string{}
			}
		}
	}
	for i := range p.MainFeatures {
		f := &p.MainFeatures[i]
		if strings.TrimSpace(f.Text) == "" {
			return required(fmt.Sprintf("main_features[%d].text", i))
		}
		if f.Type == "" {
			f.Type = "key_value"
		}
	}
	if p.ShortDescription.Type == "" && p.ShortDescription.Content != "" {
		p.ShortDescription.Type = "plaintext"
	}
	if p.LastUpdated == "" {
		p.LastUpdated = s.clock.Now().UTC().Format(TimeLayout)
	} else {
		t, err := time.Parse(time.RFC3339Nano, p.LastUpdated)
		if err != nil {
			return invalid("last_updated", "not an ISO 8601 timestamp such as 2026-03-04T15:00:00.000Z")
		}
		p.LastUpdated = t.UTC().Format(TimeLayout)
	}
	return nil
}

// normalizeBuyBox keeps buy_box_winner as null or an object.
func normalizeBuyBox(p *Product) error {
	raw := bytes.TrimSpace(p.BuyBoxWinner)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		p.BuyBoxWinner = nil
		return nil
	}
	if raw[0] != '{' {
		return invalid("buy_box_winner", "must be null or an object")
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return invalid("buy_box_winner", "malformed object")
	}
	p.BuyBoxWinner = buf.Bytes()
	return nil
}

func isURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}
