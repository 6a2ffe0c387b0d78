package faults

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
)

// DefaultBody is the body the public API answers with status: its own for
// 429, 500, 502, 503 and 504, and for any other status the error shape with
// the status's text.
func DefaultBody(status int) json.RawMessage {
	message, code := http.StatusText(status), ""
	switch status {
	case http.StatusTooManyRequests:
		message, code = "local_rate_limited", "local_rate_limited"
	case http.StatusInternalServerError:
		message, code = "Internal Server Error", "internal_server_error"
	case http.StatusBadGateway:
		message, code = "Bad Gateway", "bad_gateway"
	case http.StatusServiceUnavailable:
		message, code = "Service not available", "service_not_available"
	case http.StatusGatewayTimeout:
		message, code = "Gateway Timeout", "gateway_timeout"
	default:
		if message == "" {
			message = "Error " + strconv.Itoa(status)
		}
		code = strings.ReplaceAll(strings.ToLower(message), " ", "_")
	}
	b, _ := json.Marshal(struct {
		Message string `json:"message"`
		Error   string `json:"error"`
		Status  int    `json:"status"`
		Cause   []any  `json:"cause"`
	}{message, code, status, []any{}})
	return b
}
