package httpapi

import (
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/marketplace/marketplace/sales"
)

// Order, pack and shipment ids are positive integers, read as every
// numeric id of the API is (int64Param): a malformed one is a 400 naming
// the parameter, not a 404, so that a typo such as /orders/serach says
// what is wrong with it.

// handleOrderOrSearch answers GET /orders/search and GET /orders/:order_id:
// the one place where the name "search" is told apart from an order id.
func (s *Server) handleOrderOrSearch(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
	if p.ByName("order_id") == "search" {
		return s.searchOrders(w, r, caller)
	}
	return s.writeOrder(w, r, p, caller)
}

// searchOrders answers an order search by caller: the public one, where
// seller or buyer must be the caller, and the operator's, who may name
// anyone.
func (s *Server) searchOrders(w http.ResponseWriter, r *http.Request, caller int64) error {
	qv := r.URL.Query()
	pg, err := readPageOf(qv, defaultLimit)
	if err != nil {
		return err
	}
	q, err := sales.ParseSearch(qv, pg.Offset, pg.Limit)
	if err != nil {
		return err
	}
	res, err := s.m.Sales.Search(r.Context(), caller, q)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, res)
	return nil
}

// writeOrder answers the order of the path as caller sees it.
func (s *Server) writeOrder(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
	id, err := int64Param(p, "order_id")
	if err != nil {
		return err
	}
	o, err := s.m.Sales.Order(r.Context(), caller, id)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, o)
	return nil
}

// handleGetPack answers GET /packs/:pack_id.
func (s *Server) handleGetPack(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
	id, err := int64Param(p, "pack_id")
	if err != nil {
		return err
	}
	pack, err := s.m.Sales.Pack(r.Context(), caller, id)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, pack)
	return nil
}

// handleGetShipment answers GET /shipments/:shipment_id. The public API
// asks clients to send x-format-new: true and keeps an older shape for
// those that do not; the engine has only the new shape, and answers it
// whatever the header says.
func (s *Server) handleGetShipment(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
	id, err := int64Param(p, "shipment_id")
	if err != nil {
		return err
	}
	sh, err := s.m.Sales.Shipment(r.Context(), caller, id)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, sh)
	return nil
}

// handleShipmentHistory answers GET /shipments/:shipment_id/history: the
// moves of the shipment, oldest first.
func (s *Server) handleShipmentHistory(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
	id, err := int64Param(p, "shipment_id")
	if err != nil {
		return err
	}
	h, err := s.m.Sales.ShipmentHistory(r.Context(), caller, id)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, h)
	return nil
}

// handleShipmentStatuses answers GET /shipment_statuses: every status with
// its substatuses and the statuses it may move to, the same for everyone.
func (s *Server) handleShipmentStatuses(w http.ResponseWriter, _ *http.Request, _ httprouter.Params, _ int64) error {
	s.writeJSON(w, http.StatusOK, sales.ShipmentStatuses())
	return nil
}

// handleOperatorPlaceOrder answers POST /operator/orders: the sale that
// no public route makes (a buyer buys on the website).
func (s *Server) handleOperatorPlaceOrder(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	var in sales.NewOrder
	if err := decode(r, &in); err != nil {
		return err
	}
	o, err := s.m.Sales.PlaceOrder(r.Context(), in)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusCreated, o)
	return nil
}

// handleOperatorPayOrder answers POST /operator/orders/:order_id/payments
// {status: "approved"}: the payment of a payment_required order.
func (s *Server) handleOperatorPayOrder(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	id, err := int64Param(p, "order_id")
	if err != nil {
		return err
	}
	var in sales.PaymentInput
	if err := decode(r, &in); err != nil {
		return err
	}
	o, err := s.m.Sales.Pay(r.Context(), id, in)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, o)
	return nil
}

// handleOperatorCancelOrder answers POST /operator/orders/:order_id/cancel.
// The cancellation takes no input, so a body is not read.
func (s *Server) handleOperatorCancelOrder(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	id, err := int64Param(p, "order_id")
	if err != nil {
		return err
	}
	o, err := s.m.Sales.Cancel(r.Context(), id)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, o)
	return nil
}

// handleOperatorMoveShipment answers PUT
// /operator/shipments/:shipment_id/status {status, substatus} with the
// moved shipment.
func (s *Server) handleOperatorMoveShipment(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	id, err := int64Param(p, "shipment_id")
	if err != nil {
		return err
	}
	var in sales.ShipmentMove
	if err := decode(r, &in); err != nil {
		return err
	}
	sh, err := s.m.Sales.MoveShipment(r.Context(), id, in)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, sh)
	return nil
}

// handleOperatorSearchOrders answers GET /operator/orders: the query of
// GET /orders/search, for any seller or buyer.
func (s *Server) handleOperatorSearchOrders(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	return s.searchOrders(w, r, sales.Operator)
}

// handleOperatorGetOrder answers GET /operator/orders/:order_id, whoever
// its parties are.
func (s *Server) handleOperatorGetOrder(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	return s.writeOrder(w, r, p, sales.Operator)
}
