package claims

import (
	"slices"
	"strings"
)

// Reason is a claim reason of the catalogue (GET
// /post-purchase/v1/claims/reasons/{id}).
type Reason struct {
	ID            string         `json:"id"`
	Flow          string         `json:"flow"`
	Name          string         `json:"name"`
	Detail        string         `json:"detail"`
	Position      int            `json:"position"`
	Filter        ReasonFilter   `json:"filter"`
	Settings      ReasonSettings `json:"settings"`
	ParentID      *string        `json:"parent_id"`
	ChildrenTitle *string        `json:"children_title"`
	Status        string         `json:"status"`
	DateCreated   string         `json:"date_created"`
	LastUpdated   string         `json:"last_updated"`
}

// ReasonFilter says where a reason is offered.
type ReasonFilter struct {
	Group  []string `json:"group"`
	SiteID []string `json:"site_id"`
}

// ReasonSettings are the flows and resolutions a reason leads to.
type ReasonSettings struct {
	AllowedFlows        []string `json:"allowed_flows"`
	ExpectedResolutions []string `json:"expected_resolutions"`
	RulesEngineTriage   []string `json:"rules_engine_triage"`
}

// Reason families, by the id's prefix.
const (
	kindPNR = "PNR"
	kindPDD = "PDD"
)

func reasonKind(id string) string {
	switch {
	case strings.HasPrefix(id, kindPNR):
		return kindPNR
	case strings.HasPrefix(id, kindPDD):
		return kindPDD
	}
	return ""
}

// catalogued is a reason of the catalogue and the texts of its claims.
type catalogued struct {
	Reason
	text reasonText
}

// reasonText is what the detail of a claim of a reason says.
type reasonText struct {
	title, problem string
}

// catalogue is the seeded reason catalogue: one reason of the paid, not
// received family and four of the different or defective product one.
var catalogue = []catalogued{
	{Reason{ID: "PNR3430", Flow: "mediations_undelivered", Name: "not_received", Detail: "No recibí el producto", Position: 1,
		Settings: ReasonSettings{AllowedFlows: []string{"mediations"}, ExpectedResolutions: []string{ResolutionProduct, ResolutionRefund}, RulesEngineTriage: []string{}}},
		reasonText{"Reclamo abierto por producto no recibido", "Nos dijiste que no recibiste el producto"}},
	{Reason{ID: "PDD9549", Flow: "post_purchase_delivered", Name: "damaged_product", Detail: "El producto llegó dañado", Position: 2,
		Settings: ReasonSettings{AllowedFlows: []string{"returns", "mediations"}, ExpectedResolutions: []string{ResolutionRefund, ResolutionChangeProduct, ResolutionReturnProduct}, RulesEngineTriage: []string{"defective"}}},
		reasonText{"Reclamo abierto por producto dañado", "Nos dijiste que el producto llegó dañado"}},
	{Reason{ID: "PDD9550", Flow: "post_purchase_delivered", Name: "incomplete_product", Detail: "Llegó incompleto", Position: 3,
		Settings: ReasonSettings{AllowedFlows: []string{"returns", "mediations"}, ExpectedResolutions: []string{ResolutionRefund, ResolutionChangeProduct, ResolutionReturnProduct}, RulesEngineTriage: []string{"incomplete"}}},
		reasonText{"Reclamo abierto por producto incompleto", "Nos dijiste que el producto llegó incompleto"}},
	{Reason{ID: "PDD9551", Flow: "post_purchase_delivered", Name: "different_product", Detail: "Llegó un producto distinto al que compré", Position: 4,
		Settings: ReasonSettings{AllowedFlows: []string{"returns", "mediations"}, ExpectedResolutions: []string{ResolutionRefund, ResolutionChangeProduct, ResolutionReturnProduct}, RulesEngineTriage: []string{"different"}}},
		reasonText{"Reclamo abierto por producto distinto al publicado", "Nos dijiste que el producto es distinto al publicado"}},
	{Reason{ID: "PDD9939", Flow: "post_purchase_delivered", Name: "repentant_buyer", Detail: "Llegó lo que compré en buenas condiciones pero no lo quiero", Position: 10,
		Settings: ReasonSettings{AllowedFlows: []string{"returns"}, ExpectedResolutions: []string{ResolutionChangeProduct, ResolutionReturnProduct}, RulesEngineTriage: []string{"repentant"}}},
		reasonText{"Reclamo abierto por arrepentimiento", "Nos dijiste que ya no querés el producto"}},
}

// Every reason of the catalogue is offered on every site, for every group
// of product, and dates from the catalogue's seeding.
func init() {
	for i := range catalogue {
		r := &catalogue[i].Reason
		r.Filter = ReasonFilter{Group: []string{"generic", "fashion"}, SiteID: []string{"MLA", "MLB", "MLM", "MLC", "MCO", "MLU", "MPE", "MEC"}}
		r.Status = "active"
		r.DateCreated, r.LastUpdated = "2024-01-15T18:07:42.632-04:00", "2024-03-12T20:20:21.795-04:00"
	}
}

// ReasonIDs lists the ids of the reason catalogue, in its order.
func ReasonIDs() []string {
	out := make([]string, len(catalogue))
	for i, c := range catalogue {
		out[i] = c.ID
	}
	return out
}

func findReason(id string) (int, bool) {
	i := slices.IndexFunc(catalogue, func(c catalogued) bool { return c.ID == id })
	return i, i >= 0
}

// GetReason returns the reason id of the catalogue. Errors: NotFound
// ("Resource not found").
func GetReason(id string) (Reason, error) {
	i, ok := findReason(id)
	if !ok {
		return Reason{}, errNotFound()
	}
	r := catalogue[i].Reason
	r.Filter.Group, r.Filter.SiteID = slices.Clone(r.Filter.Group), slices.Clone(r.Filter.SiteID)
	r.Settings.AllowedFlows = slices.Clone(r.Settings.AllowedFlows)
	r.Settings.ExpectedResolutions = slices.Clone(r.Settings.ExpectedResolutions)
	r.Settings.RulesEngineTriage = slices.Clone(r.Settings.RulesEngineTriage)
	return r, nil
}

// ReturnReasons lists the reasons of a failed return review (GET
// /post-purchase/v1/returns/reasons).
func ReturnReasons() []ReturnReason {
	out := make([]ReturnReason, len(returnReasons))
	for i, r := range returnReasons {
		r.Apply = slices.Clone(r.Apply)
		out[i] = r
	}
	return out
}
