package catalog_test

import (
	"encoding/json"
	"os"
	"regexp"
	"testing"

	"github.com/matryer/is"

	"github.com/marketplace/marketplace/catalog"
	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/geo"
)

func catRec(id, name, parent string) catalog.DatasetRecord {
	d := map[string]any{"id": id, "name": name}
	if parent != "" {
		d["parent_id"] = parent
	}
	return rec(catalog.KindCategory, d)
}

func TestBuiltinCategories_CoverTheCategoriesOfItemsFeesAndCatalog(t *testing.T) {
	is := is.New(t)
	s := newLoaded(t)
	// Every category id named by the shipped fee rules and catalog data.
	used := map[string]bool{}
	re := regexp.MustCompile(`"category_id":\s*"([A-Z]{3}[0-9]+)"`)
	for _, f := range []string{"data/catalog.json", "../fees/data/fees.json"} {
		b, err := os.ReadFile(f)
		is.NoErr(err)
		for _, m := range re.FindAllSubmatch(b, -1) {
			used[string(m[1])] = true
		}
	}
	used["MLA1055"], used["MLB1055"] = true, true // the ids the examples and demo publish in
	is.True(len(used) >= 4)
	for id := range used {
		c, err := s.Category(ctx, id)
		is.NoErr(err) // a shipped category
		is.Equal(c.PathFromRoot[len(c.PathFromRoot)-1].ID, id)
	}
}

func TestCategory_PathFromRootEndsWithItselfAndChildrenAreByName(t *testing.T) {
	is := is.New(t)
	s := newLoaded(t)
	c, err := s.Category(ctx, "MLA1055")
	is.NoErr(err)
	is.Equal(c.PathFromRoot, []catalog.CategoryRef{{ID: "MLA1051", Name: "Celulares y Teléfonos"}, {ID: "MLA1055", Name: "Celulares y Smartphones"}})
	is.Equal(c.ChildrenCategories, []catalog.CategoryRef{}) // a leaf has an empty list, not null
	is.Equal(c.Picture, nil)
	root, err := s.Category(ctx, "MLA1051")
	is.NoErr(err)
	is.Equal(root.PathFromRoot, []catalog.CategoryRef{{ID: "MLA1051", Name: "Celulares y Teléfonos"}})
	is.Equal(root.ChildrenCategories, []catalog.CategoryRef{{ID: "MLA3813", Name: "Accesorios para Celulares"}, {ID: "MLA1055", Name: "Celulares y Smartphones"}})
}

func TestSiteCategories_RootsByNameEmptyForAKnownSiteNotFoundForAnUnknownOne(t *testing.T) {
	is := is.New(t)
	s := newLoaded(t)
	roots, err := s.SiteCategories(ctx, "MLA")
	is.NoErr(err)
	is.True(len(roots) >= 5)
	for i := 1; i < len(roots); i++ {
		is.True(roots[i-1].Name <= roots[i].Name) // ordered by name
	}
	for _, r := range roots {
		is.True(r.ID != "MLA1055") // only roots
	}
	_, err = s.SiteCategories(ctx, "XXX")
	is.True(errs.Is(err, errs.NotFound))
	is.Equal(errs.As(err).Message, "Site not found: XXX")
}

func TestCategory_UnknownOrMalformedIDIsNotFoundWithThePublicMessage(t *testing.T) {
	is := is.New(t)
	s := newLoaded(t)
	for _, id := range []string{"MLA999999", "mla1055", "MLA", "MLA12x", ""} {
		_, err := s.Category(ctx, id)
		is.True(errs.Is(err, errs.NotFound))
		is.Equal(errs.As(err).Message, "Category not found: "+id)
	}
}

func TestUpsertCategory_ImportedCategoryMovesBetweenParentsAndRoots(t *testing.T) {
	is := is.New(t)
	s, st := newService(t)
	is.NoErr(importRecords(s, st, catRec("MLA1", "Uno", ""), catRec("MLA2", "Dos", ""), catRec("MLA3", "Tres", "MLA1")))
	is.NoErr(importRecords(s, st, catRec("MLA3", "Tres", "MLA2")))
	one, err := s.Category(ctx, "MLA1")
	is.NoErr(err)
	is.Equal(len(one.ChildrenCategories), 0) // moved away
	two, err := s.Category(ctx, "MLA2")
	is.NoErr(err)
	is.Equal(two.ChildrenCategories, []catalog.CategoryRef{{ID: "MLA3", Name: "Tres"}})
	is.NoErr(importRecords(s, st, catRec("MLA3", "Tres", "")))
	roots, err := s.SiteCategories(ctx, "MLA")
	is.NoErr(err)
	is.Equal(len(roots), 3) // a category without parent_id is a root
}

func TestUpsertCategory_InvalidRecordsAreRejectedAndChangeNothing(t *testing.T) {
	is := is.New(t)
	s, st := newService(t)
	is.NoErr(importRecords(s, st, catRec("MLA1", "Uno", ""), catRec("MLA2", "Dos", "MLA1")))
	for _, tc := range []struct {
		rec  catalog.DatasetRecord
		want string
	}{
		{catRec("", "x", ""), "The fields [id] are required for requested call"},
		{catRec("MLA1x", "x", ""), `The fields [id] are invalid for requested call: "MLA1x" is not a site id followed by 1 to 12 digits (e.g. MLA1055)`},
		{catRec("MLA5", " ", ""), "The fields [name] are required for requested call"},
		{catRec("MLA5", "x", "MLB1"), `The fields [parent_id] are invalid for requested call: "MLB1" is not a category of site MLA`},
		{catRec("MLA5", "x", "MLA9"), "The fields [parent_id] are invalid for requested call: category MLA9 is not known (list a parent before its children)"},
		{catRec("MLA1", "Uno", "MLA2"), "The fields [parent_id] are invalid for requested call: MLA2 is below MLA1: a category cannot be its own ancestor"},
		{catRec("MLA1", "Uno", "MLA1"), "The fields [parent_id] are invalid for requested call: MLA1 is below MLA1: a category cannot be its own ancestor"},
		{rec(catalog.KindCategory, map[string]any{"id": "MLA5", "name": "x", "picture": "ftp://x"}), "The fields [picture] are invalid for requested call: not an http(s) URL"},
	} {
		err := importRecords(s, st, tc.rec)
		is.True(errs.Is(err, errs.Invalid))
		is.Equal(errs.As(err).Message, tc.want)
	}
	two, err := s.Category(ctx, "MLA2")
	is.NoErr(err)
	is.Equal(len(two.PathFromRoot), 2) // unchanged
	_, err = s.Category(ctx, "MLA5")
	is.True(errs.Is(err, errs.NotFound))
}

func TestUpsertCategory_TreeDeeperThanTheLimitIsRefused(t *testing.T) {
	is := is.New(t)
	s, st := newService(t)
	parent := ""
	for i := 1; i <= catalog.MaxCategoryDepth; i++ {
		id := "MLA" + string(rune('0'+i/10)) + string(rune('0'+i%10))
		is.NoErr(importRecords(s, st, catRec(id, "c", parent)))
		parent = id
	}
	err := importRecords(s, st, catRec("MLA99", "c", parent))
	is.True(errs.Is(err, errs.Invalid))
	c, err := s.Category(ctx, parent)
	is.NoErr(err)
	is.Equal(len(c.PathFromRoot), catalog.MaxCategoryDepth)
}

func TestLoadCategories_ImportedCategorySurvivesANewerDataset(t *testing.T) {
	is := is.New(t)
	s, st := newService(t)
	d := catalog.Dataset{Version: 1, Records: []catalog.DatasetRecord{catRec("MLA1", "Uno", "")}}
	is.NoErr(s.LoadCategories(ctx, d))
	is.NoErr(importRecords(s, st, catRec("MLA1", "Mine", "")))
	d2 := catalog.Dataset{Version: 2, Records: []catalog.DatasetRecord{catRec("MLA1", "Uno v2", ""), catRec("MLA2", "Dos", "")}}
	is.NoErr(s.LoadCategories(ctx, d2))
	c, err := s.Category(ctx, "MLA1")
	is.NoErr(err)
	is.Equal(c.Name, "Mine")
	_, err = s.Category(ctx, "MLA2")
	is.NoErr(err)
}

func TestCategoryView_EncodesNullPictureAndPermalinkAndAttributeTypes(t *testing.T) {
	is := is.New(t)
	s := newLoaded(t)
	c, err := s.Category(ctx, "MLA1055")
	is.NoErr(err)
	b, err := json.Marshal(c)
	is.NoErr(err)
	is.Equal(string(b), `{"id":"MLA1055","name":"Celulares y Smartphones","picture":null,"permalink":null,"path_from_root":[{"id":"MLA1051","name":"Celulares y Teléfonos"},{"id":"MLA1055","name":"Celulares y Smartphones"}],"children_categories":[],"attribute_types":"attributes"}`)
}

func TestSite_ShowsCurrenciesDefaultFirstAndRootCategories(t *testing.T) {
	is := is.New(t)
	s, st := newService(t)
	is.NoErr(geo.New(st, clock.Wall{}).LoadBuiltin(ctx))
	is.NoErr(s.LoadBuiltin(ctx))
	v, err := s.Site(ctx, "MLA")
	is.NoErr(err)
	is.Equal(v.ID, "MLA")
	is.Equal(v.CountryID, "AR")
	is.Equal(v.DefaultCurrencyID, "ARS")
	is.Equal(v.Currencies, []catalog.SiteCurrency{{ID: "ARS", Symbol: "$"}, {ID: "USD", Symbol: "U$S"}})
	roots, err := s.SiteCategories(ctx, "MLA")
	is.NoErr(err)
	is.Equal(v.Categories, roots)
	_, err = s.Site(ctx, "XXX")
	is.True(errs.Is(err, errs.NotFound))
	is.Equal(errs.As(err).Message, "Site not found: XXX")
}
