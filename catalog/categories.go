package catalog

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/storage"
)

// KindCategory is the record kind of a category in a reference document.
const KindCategory = "category"

// MaxCategoryDepth bounds a category's path from its root, so that a path is
// always short and a walk up the tree always ends.
const MaxCategoryDepth = 10

// Category is one node of a site's category tree, as imported: a root has no
// parent_id. Children are derived from their parent_id.
type Category struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	ParentID  string `json:"parent_id,omitempty"`
	Picture   string `json:"picture,omitempty"`
	Permalink string `json:"permalink,omitempty"`
}

// CategoryRef is a category as listed in another answer: {id, name}.
type CategoryRef struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// CategoryView is a category as GET /categories/{category_id} shows it.
// picture and permalink are null when the record has none, as in the public
// API.
type CategoryView struct {
	ID                 string        `json:"id"`
	Name               string        `json:"name"`
	Picture            *string       `json:"picture"`
	Permalink          *string       `json:"permalink"`
	PathFromRoot       []CategoryRef `json:"path_from_root"`
	ChildrenCategories []CategoryRef `json:"children_categories"`
	AttributeTypes     string        `json:"attribute_types"`
}

// categorySite returns the site prefix of a category id: the site id
// followed by 1 to 12 digits, as in MLA1055.
func categorySite(id string) (string, bool) {
	if len(id) < 4 || len(id) > 15 || !isSiteID(id[:3]) {
		return "", false
	}
	if strings.Trim(id[3:], "0123456789") != "" {
		return "", false
	}
	return id[:3], true
}

func errCategoryNotFound(id string) error {
	return errs.WithCode(errs.NotFound, "not_found", fmt.Sprintf("Category not found: %s", id))
}

// getCategory reads one category. Errors: NotFound.
func getCategory(tx storage.Tx, id string) (Category, error) {
	var c Category
	err := kv.GetJSON(tx, categoryKey(id), &c)
	if errors.Is(err, storage.ErrNotFound) {
		return Category{}, errCategoryNotFound(id)
	}
	if err != nil {
		return Category{}, errs.Internalf(err, "read category %s", id)
	}
	return c, nil
}

// putCategory checks c and writes it with its place in the tree. The parent
// must already be stored (a document lists parents before children), be of
// the same site, and not have c on its own path: the tree stays a tree.
func (s *Service) putCategory(tx storage.Tx, c Category, imported bool) error {
	c.Name = strings.TrimSpace(c.Name)
	if c.ID == "" {
		return required("id")
	}
	site, ok := categorySite(c.ID)
	if !ok {
		return invalid("id", fmt.Sprintf("%q is not a site id followed by 1 to 12 digits (e.g. MLA1055)", c.ID))
	}
	if c.Name == "" {
		return required("name")
	}
	if len(c.Name) > 200 {
		return invalid("name", "longer than 200 characters")
	}
	if c.Picture != "" && !isURL(c.Picture) {
		return invalid("picture", "not an http(s) URL")
	}
	if c.Permalink != "" && !isURL(c.Permalink) {
		return invalid("permalink", "not an http(s) URL")
	}
	if c.ParentID != "" {
		if ps, ok := categorySite(c.ParentID); !ok || ps != site {
			return invalid("parent_id", fmt.Sprintf("%q is not a category of site %s", c.ParentID, site))
		}
		depth := 1
		for id := c.ParentID; id != ""; depth++ {
			if id == c.ID {
				return invalid("parent_id", fmt.Sprintf("%s is below %s: a category cannot be its own ancestor", c.ParentID, c.ID))
			}
			if depth >= MaxCategoryDepth {
				return invalid("parent_id", fmt.Sprintf("the tree would be deeper than %d levels", MaxCategoryDepth))
			}
			p, err := getCategory(tx, id)
			if errs.Is(err, errs.NotFound) {
				return invalid("parent_id", fmt.Sprintf("category %s is not known (list a parent before its children)", id))
			}
			if err != nil {
				return err
			}
			id = p.ParentID
		}
		if err := checkSubtreeDepth(tx, c.ID, depth); err != nil {
			return err
		}
	}
	if skip, err := skipBuiltin(tx, imported, KindCategory, c.ID); err != nil || skip {
		return err
	}
	var old Category
	err := kv.GetJSON(tx, categoryKey(c.ID), &old)
	switch {
	case err == nil:
		if err := tx.Delete(categoryPlaceKey(site, old.ParentID, c.ID)); err != nil {
			return err
		}
	case !errors.Is(err, storage.ErrNotFound):
		return err
	}
	if err := tx.Set(categoryPlaceKey(site, c.ParentID, c.ID), nil); err != nil {
		return err
	}
	return kv.SetJSON(tx, categoryKey(c.ID), c)
}

// checkSubtreeDepth refuses a move that would push the deepest descendant of
// id past MaxCategoryDepth; id would sit at level depth.
func checkSubtreeDepth(tx storage.Tx, id string, depth int) error {
	level := []string{id}
	for ; len(level) > 0; depth++ {
		if depth > MaxCategoryDepth {
			return invalid("parent_id", fmt.Sprintf("the tree would be deeper than %d levels", MaxCategoryDepth))
		}
		var next []string
		for _, p := range level {
			ids, err := childCategoryIDs(tx, p)
			if err != nil {
				return err
			}
			next = append(next, ids...)
		}
		level = next
	}
	return nil
}

func childCategoryIDs(tx storage.Tx, parentID string) ([]string, error) {
	prefix := categoryChildPrefix(parentID)
	it := tx.Iterate(storage.Prefix(prefix))
	defer it.Close()
	var ids []string
	for ; it.Valid(); it.Next() {
		ids = append(ids, keycodec.Read(it.Key()[len(prefix):]).Str())
	}
	return ids, nil
}

// refsByName reads the categories of ids and orders them by name, as the
// public API lists a site's categories and a category's children.
func refsByName(tx storage.Tx, ids []string) ([]CategoryRef, error) {
	if _, ok := tx.(storage.Prefetcher); ok && len(ids) > 0 {
		keys := make([][]byte, len(ids))
		for i, id := range ids {
			keys[i] = categoryKey(id)
		}
		if err := storage.Prefetch(tx, keys...); err != nil {
			return nil, err
		}
	}
	out := make([]CategoryRef, 0, len(ids))
	for _, id := range ids {
		c, err := getCategory(tx, id)
		if err != nil {
			return nil, err
		}
		out = append(out, CategoryRef{ID: c.ID, Name: c.Name})
	}
	slices.SortFunc(out, func(a, b CategoryRef) int {
		return cmp.Or(strings.Compare(a.Name, b.Name), strings.Compare(a.ID, b.ID))
	})
	return out, nil
}

// SiteCategories returns the root categories of a site, by name. A known
// site without categories answers an empty list. Errors: NotFound (unknown
// site).
func (s *Service) SiteCategories(ctx context.Context, siteID string) ([]CategoryRef, error) {
	var out []CategoryRef
	err := s.store.View(ctx, func(tx storage.Tx) error {
		var err error
		out, err = siteCategories(tx, siteID)
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		if err := s.checkSite(ctx, siteID); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func siteCategories(tx storage.Tx, siteID string) ([]CategoryRef, error) {
	read, done := openSiteCategories(tx, siteID)
	defer done()
	return read()
}

// openSiteCategories opens the list of siteID's root categories and returns
// the function that reads it and the one that closes it (the caller defers
// it): a caller that opens it before its first read has its first page
// read with that read, on a backend at network distance.
func openSiteCategories(tx storage.Tx, siteID string) (read func() ([]CategoryRef, error), done func()) {
	if !isSiteID(siteID) {
		return func() ([]CategoryRef, error) { return []CategoryRef{}, nil }, func() {}
	}
	prefix := categoryRootPrefix(siteID)
	it := tx.Iterate(storage.Prefix(prefix))
	read = func() ([]CategoryRef, error) {
		var ids []string
		for ; it.Valid(); it.Next() {
			ids = append(ids, keycodec.Read(it.Key()[len(prefix):]).Str())
		}
		it.Close()
		return refsByName(tx, ids)
	}
	return read, it.Close
}

// checkSite answers the public API's not-found for a site that neither the
// catalog nor geo knows.
func (s *Service) checkSite(ctx context.Context, siteID string) error {
	if !isSiteID(siteID) {
		return errs.NotFoundf("Site not found: %s", siteID)
	}
	if _, err := s.sites.Site(ctx, siteID); err != nil {
		if errs.Is(err, errs.NotFound) {
			return errs.NotFoundf("Site not found: %s", siteID)
		}
		return err
	}
	return nil
}

// Category returns a category with its path from the root (itself last) and
// its children by name. Errors: NotFound.
func (s *Service) Category(ctx context.Context, id string) (CategoryView, error) {
	if _, ok := categorySite(id); !ok {
		return CategoryView{}, errCategoryNotFound(id)
	}
	var v CategoryView
	err := s.store.View(ctx, func(tx storage.Tx) error {
		c, err := getCategory(tx, id)
		if err != nil {
			return err
		}
		v = CategoryView{ID: c.ID, Name: c.Name, AttributeTypes: "attributes"}
		if c.Picture != "" {
			v.Picture = &c.Picture
		}
		if c.Permalink != "" {
			v.Permalink = &c.Permalink
		}
		path := []CategoryRef{{ID: c.ID, Name: c.Name}}
		for p := c.ParentID; p != "" && len(path) <= MaxCategoryDepth; {
			pc, err := getCategory(tx, p)
			if err != nil {
				return errs.Internalf(err, "category %s: parent %s", c.ID, p)
			}
			path = append(path, CategoryRef{ID: pc.ID, Name: pc.Name})
			p = pc.ParentID
		}
		slices.Reverse(path)
		v.PathFromRoot = path
		ids, err := childCategoryIDs(tx, c.ID)
		if err != nil {
			return err
		}
		v.ChildrenCategories, err = refsByName(tx, ids)
		return err
	})
	return v, err
}

// decodeCategory decodes a category record; children_categories and
// path_from_root of a category copied from the public API are derived here,
// so they are ignored.
func decodeCategory(data json.RawMessage) (Category, error) {
	var c Category
	err := decodeRecord(data, &c)
	return c, err
}
