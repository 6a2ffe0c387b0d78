package httpapi

import (
	"bytes"
	"net/http"
	"strconv"

	"marketplace/accounts"
	"marketplace/fees"
	"marketplace/internal/jsonenc"
)

// The most requested answers are encoded without reflection, into the same
// bytes encoding/json writes with HTML escaping off (as writeJSON sets it);
// tests hold each encoder to that over random values.

// writeEncoded answers status and the bytes enc appends, as writeJSON would.
func writeEncoded(w http.ResponseWriter, status int, enc func([]byte) []byte) {
	buf := bufPool.Get().(*bytes.Buffer)
	buf.Reset()
	defer bufPool.Put(buf)
	b := enc(buf.AvailableBuffer())
	buf.Write(b)
	buf.WriteByte('\n')
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// writeUserView answers a user record, whole or public, as writeJSON would.
func (s *Server) writeUserView(w http.ResponseWriter, v accounts.UserView) {
	switch u := v.(type) {
	case accounts.User:
		writeEncoded(w, http.StatusOK, func(b []byte) []byte { return appendUser(b, u) })
	case accounts.PublicUser:
		writeEncoded(w, http.StatusOK, func(b []byte) []byte { return appendPublicUser(b, u) })
	default:
		s.writeJSON(w, http.StatusOK, v)
	}
}

func appendUser(b []byte, u accounts.User) []byte {
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, u.ID, 10)
	b = append(b, `,"nickname":`...)
	b = jsonenc.AppendString(b, u.Nickname)
	b = append(b, `,"registration_date":`...)
	b = jsonenc.AppendString(b, u.RegistrationDate)
	b = append(b, `,"first_name":`...)
	b = jsonenc.AppendString(b, u.FirstName)
	b = append(b, `,"last_name":`...)
	b = jsonenc.AppendString(b, u.LastName)
	b = append(b, `,"gender":`...)
	b = jsonenc.AppendString(b, u.Gender)
	b = append(b, `,"country_id":`...)
	b = jsonenc.AppendString(b, u.CountryID)
	b = append(b, `,"site_id":`...)
	b = jsonenc.AppendString(b, u.SiteID)
	b = append(b, `,"tags":`...)
	b = appendStrings(b, u.Tags)
	return append(b, '}')
}

func appendPublicUser(b []byte, u accounts.PublicUser) []byte {
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, u.ID, 10)
	b = append(b, `,"nickname":`...)
	b = jsonenc.AppendString(b, u.Nickname)
	b = append(b, `,"registration_date":`...)
	b = jsonenc.AppendString(b, u.RegistrationDate)
	b = append(b, `,"country_id":`...)
	b = jsonenc.AppendString(b, u.CountryID)
	b = append(b, `,"site_id":`...)
	b = jsonenc.AppendString(b, u.SiteID)
	b = append(b, `,"tags":`...)
	b = appendStrings(b, u.Tags)
	return append(b, '}')
}

func appendStrings(b []byte, ss []string) []byte {
	if ss == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonenc.AppendString(b, s)
	}
	return append(b, ']')
}

// writeListingPrices answers one listing price, or a list of them, as
// writeJSON would.
func writeListingPrices(w http.ResponseWriter, prices []fees.ListingPrice, one bool) {
	writeEncoded(w, http.StatusOK, func(b []byte) []byte {
		if one {
			return appendListingPrice(b, prices[0])
		}
		if prices == nil {
			return append(b, "null"...)
		}
		b = append(b, '[')
		for i, p := range prices {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendListingPrice(b, p)
		}
		return append(b, ']')
	})
}

func appendListingPrice(b []byte, p fees.ListingPrice) []byte {
	b = append(b, `{"listing_type_id":`...)
	b = jsonenc.AppendString(b, p.ListingTypeID)
	b = append(b, `,"listing_type_name":`...)
	b = jsonenc.AppendString(b, p.ListingTypeName)
	b = append(b, `,"listing_exposure":`...)
	b = jsonenc.AppendString(b, p.ListingExposure)
	b = append(b, `,"requires_picture":`...)
	b = strconv.AppendBool(b, p.RequiresPicture)
	b = append(b, `,"currency_id":`...)
	b = jsonenc.AppendString(b, p.CurrencyID)
	b = append(b, `,"listing_fee_amount":`...)
	b = append(b, p.ListingFeeAmount.String()...)
	b = append(b, `,"listing_fee_details":{"fixed_fee":`...)
	b = append(b, p.ListingFeeDetails.FixedFee.String()...)
	b = append(b, `,"gross_amount":`...)
	b = append(b, p.ListingFeeDetails.GrossAmount.String()...)
	b = append(b, `},"sale_fee_amount":`...)
	b = append(b, p.SaleFeeAmount.String()...)
	d := p.SaleFeeDetails
	b = append(b, `,"sale_fee_details":{"percentage_fee":`...)
	b = append(b, d.PercentageFee.String()...)
	b = append(b, `,"meli_percentage_fee":`...)
	b = append(b, d.MeliPercentageFee.String()...)
	b = append(b, `,"financing_add_on_fee":`...)
	b = append(b, d.FinancingAddOnFee.String()...)
	b = append(b, `,"fixed_fee":`...)
	b = append(b, d.FixedFee.String()...)
	b = append(b, `,"gross_amount":`...)
	b = append(b, d.GrossAmount.String()...)
	b = append(b, `},"free_relist":`...)
	b = strconv.AppendBool(b, p.FreeRelist)
	b = append(b, `,"stop_time":`...)
	b = jsonenc.AppendString(b, p.StopTime)
	return append(b, '}')
}
