package notify

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	"code.dny.dev/ssrf"
	"golang.org/x/net/idna"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/textcheck"
)

// Addresses a callback may never reach, whatever the options: a callback URL
// is chosen by whoever registers the application, and the server POSTs to it
// from inside its own network (server-side request forgery).
var (
	// Cloud metadata services that do not live in the link-local block.
	metadataAddrs = []netip.Addr{
		netip.MustParseAddr("100.100.100.200"), // Alibaba Cloud
		netip.MustParseAddr("fd00:ec2::254"),   // AWS, over IPv6
	}
	metadataHosts = []string{"metadata.google.internal", "metadata.goog", "metadata", "instance-data", "instance-data.ec2.internal"}
	// 100.64.0.0/10 is shared address space behind carrier-grade NAT: private
	// in all but name.
	sharedSpace = netip.MustParsePrefix("100.64.0.0/10")
	// 0.0.0.0/8 means "this network"; many stacks route it to the host itself.
	thisNetwork = netip.MustParsePrefix("0.0.0.0/8")
)

var (
	// IPv6 prefixes whose addresses carry an IPv4 address: IPv4-compatible
	// (::/96, deprecated), NAT64 (64:ff9b::/96, RFC 6052; 64:ff9b:1::/48,
	// RFC 8215, last 32 bits) and 6to4 (2002::/16, bits 16-47).
	ipv4Compatible = netip.MustParsePrefix("::/96")
	nat64          = netip.MustParsePrefix("64:ff9b::/96")
	nat64Local     = netip.MustParsePrefix("64:ff9b:1::/48")
	sixToFour      = netip.MustParsePrefix("2002::/16")
	// fec0::/10, deprecated site-local: private in all but name.
	siteLocal = netip.MustParsePrefix("fec0::/10")
)

// The IANA special-purpose registries (documentation, benchmarking,
// reserved and protocol ranges, Teredo and the rest), kept current by a
// maintained list rather than by hand. The private-callback guard also lets
// through the ranges that -allow-private-callbacks is about.
var (
	publicOnly = ssrf.New(ssrf.WithAnyPort())
	orPrivate  = ssrf.New(ssrf.WithAnyPort(),
		ssrf.WithAllowedV4Prefixes(
			netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("10.0.0.0/8"),
			netip.MustParsePrefix("172.16.0.0/12"), netip.MustParsePrefix("192.168.0.0/16"), sharedSpace),
		ssrf.WithAllowedV6Prefixes(
			netip.MustParsePrefix("::1/128"), netip.MustParsePrefix("fc00::/7"), siteLocal))
)

// embeddedIPv4 returns the IPv4 address an IPv6 address carries, if any.
func embeddedIPv4(addr netip.Addr) (netip.Addr, bool) {
	if !addr.Is6() {
		return netip.Addr{}, false
	}
	b := addr.As16()
	switch {
	case ipv4Compatible.Contains(addr):
		if addr.IsUnspecified() || addr.IsLoopback() {
			return netip.Addr{}, false // :: and ::1 are IPv6's own
		}
		return netip.AddrFrom4([4]byte(b[12:16])), true
	case nat64.Contains(addr), nat64Local.Contains(addr):
		return netip.AddrFrom4([4]byte(b[12:16])), true
	case sixToFour.Contains(addr):
		return netip.AddrFrom4([4]byte(b[2:6])), true
	}
	return netip.Addr{}, false
}

// refusal says why a callback may not reach addr, or "" when it may.
// Link-local, metadata, unspecified, multicast and broadcast addresses are
// always refused; private, shared and loopback ones unless allowPrivate.
func refusal(addr netip.Addr, allowPrivate bool) string {
	addr = addr.Unmap()
	if v4, ok := embeddedIPv4(addr); ok {
		// Translated and tunnelled forms reach the IPv4 address they carry.
		addr = v4
	}
	for _, m := range metadataAddrs {
		if addr == m {
			return "a cloud metadata address"
		}
	}
	switch {
	case addr.IsLinkLocalUnicast() || addr.IsLinkLocalMulticast():
		return "a link-local address"
	case addr.IsUnspecified() || thisNetwork.Contains(addr):
		return "an unspecified address"
	case addr.IsMulticast() || addr == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return "a multicast or broadcast address"
	}
	guard := orPrivate
	if !allowPrivate {
		switch {
		case addr.IsLoopback():
			return "a loopback address (allowed only with -allow-private-callbacks)"
		case addr.IsPrivate() || sharedSpace.Contains(addr) || siteLocal.Contains(addr):
			return "a private address (allowed only with -allow-private-callbacks)"
		}
		guard = publicOnly
	}
	if guard.SafeAddr(addr) != nil {
		return "a special-purpose address"
	}
	return ""
}

// maxURLLength bounds a callback URL, as browsers and proxies commonly do.
const maxURLLength = 2048

// resolveTimeout bounds the name lookup of a callback host at registration.
const resolveTimeout = 3 * time.Second

// checkCallbackURL validates raw as a callback URL: absolute http or https,
// with a host whose every address, if it resolves, is allowed. It returns the URL in its
// canonical form. Errors: Invalid.
func checkCallbackURL(ctx context.Context, raw string, allowPrivate bool) (string, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "", errs.Invalidf("The fields [callback_url] are required for requested call")
	}
	if len(raw) > maxURLLength {
		return "", errs.Invalidf("Invalid callback_url: it must be at most %d characters", maxURLLength)
	}
	// Checked before the URL is quoted in any message: a control or
	// formatting character would reach the logs and screens that show it.
	if strings.ContainsFunc(raw, func(r rune) bool {
		return textcheck.IsControl(r) || textcheck.IsBidiControl(r) || unicode.Is(unicode.Cf, r)
	}) {
		return "", errs.Invalidf("Invalid callback_url: it must not contain control or formatting characters")
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Hostname() == "" {
		return "", errs.Invalidf("Invalid callback_url: %s. It must be an absolute http or https URL", raw)
	}
	if port := u.Port(); port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return "", errs.Invalidf("Invalid callback_url: %s. The port must be between 1 and 65535", raw)
		}
	}
	if u.User != nil {
		return "", errs.Invalidf("Invalid callback_url: %s. It must not carry user credentials", raw)
	}
	if err := checkHostCharacters(raw, u.Hostname()); err != nil {
		return "", err
	}
	if u.Fragment != "" {
		u.Fragment = ""
	}
	host, err := dialHost(u.Hostname())
	if err != nil {
		return "", errs.Invalidf("Invalid callback_url: %s. The host %s is not a valid address", raw, u.Hostname())
	}
	for _, h := range metadataHosts {
		if host == h {
			return "", errs.Invalidf("Callback URL not allowed: %s is a cloud metadata address", host)
		}
	}
	var addrs []netip.Addr
	switch {
	case isIP(host):
		addrs = []netip.Addr{netip.MustParseAddr(host)}
	case host == "localhost" || strings.HasSuffix(host, ".localhost"):
		// RFC 6761: these names always mean the loopback interface.
		addrs = []netip.Addr{netip.MustParseAddr("127.0.0.1")}
	default:
		if numericLastLabel(host) {
			// 2130706433, 0177.0.0.1, 0x7f.1: resolvers disagree on
			// what these mean, so none is taken.
			return "", errs.Invalidf("Invalid callback_url: %s. The host %s is not a valid address", raw, host)
		}
		lctx, cancel := context.WithTimeout(ctx, resolveTimeout)
		defer cancel()
		// A name that does not resolve now is accepted: it may be published
		// later, or the server may run without DNS. Its POSTs fail until it
		// resolves, and each dial is checked (dialControl) all the same.
		addrs, _ = net.DefaultResolver.LookupNetIP(lctx, "ip", host)
	}
	for _, a := range addrs {
		if why := refusal(a, allowPrivate); why != "" {
			return "", errs.Invalidf("Callback URL not allowed: %s is %s", host, why)
		}
	}
	return u.String(), nil
}

// checkHostCharacters refuses a host that no resolver would look up as it
// is written: url.Parse decodes escapes in a host (127.0.0.1%2509 is the
// host "127.0.0.1%09", ex%C3%B1.com is "exñ.com"), and an IPv6 zone
// (%25eth0) names an interface of the server's own machine, so a percent
// sign in the authority is never taken; nor is any character of the
// decoded host beyond letters, digits, marks (internationalized names),
// '-', '.', '_' and the colons of an IPv6 address. The dial-time check
// would refuse such hosts too, but only when a notification is sent, long
// after the application was registered. Errors: Invalid.
func checkHostCharacters(raw, host string) error {
	authority := raw
	if _, rest, ok := strings.Cut(raw, "://"); ok {
		authority = rest
	}
	if i := strings.IndexAny(authority, "/?#"); i >= 0 {
		authority = authority[:i]
	}
	if strings.Contains(authority, "%") || strings.Contains(host, "%") {
		return errs.Invalidf("Invalid callback_url: %s. The host must not contain percent-encoded characters", raw)
	}
	for _, r := range host {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) || r == '-' || r == '.' || r == '_' || r == ':' {
			continue
		}
		return errs.Invalidf("Invalid callback_url: %s. The host %s is not a valid address", raw, host)
	}
	return nil
}

// dialHost returns the host that the HTTP client dials for hostname, in
// lower case and without a trailing dot: an ASCII host as it is, any other
// mapped as net/http maps it before it dials (IDNA's lookup profile, UTS
// #46), so that the checks see the address the host means. Full-width,
// circled and mathematical digits and letters and the ideographic full
// stop all map to ASCII: "１２７.０.０.１" is 127.0.0.1, "ｌｏｃａｌｈｏｓｔ"
// is localhost. A host the mapping refuses (an "xn--" label that decodes
// to such characters, digits of other scripts) is an error: net/http would
// dial it as written, and no resolver answers that.
func dialHost(hostname string) (string, error) {
	h := hostname
	if strings.ContainsFunc(h, func(r rune) bool { return r >= utf8.RuneSelf }) {
		a, err := idna.Lookup.ToASCII(h)
		if err != nil {
			return "", err
		}
		h = a
	}
	return strings.TrimSuffix(strings.ToLower(h), "."), nil
}

// numericLastLabel reports whether the last label of host is a number
// (decimal or 0x hex), which no top-level domain is.
func numericLastLabel(host string) bool {
	last := host[strings.LastIndexByte(host, '.')+1:]
	if h, ok := strings.CutPrefix(last, "0x"); ok {
		last = h
		return last == "" || strings.Trim(last, "0123456789abcdef") == ""
	}
	return last != "" && strings.Trim(last, "0123456789") == ""
}

func isIP(host string) bool {
	_, err := netip.ParseAddr(host)
	return err == nil
}

// dialControl checks the address actually dialed, after name resolution, so
// that a host whose DNS answer changed since registration still cannot reach
// a refused address.
func dialControl(allowPrivate bool) func(network, address string, _ syscall.RawConn) error {
	return func(network, address string, _ syscall.RawConn) error {
		host, _, err := net.SplitHostPort(address)
		if err != nil {
			return fmt.Errorf("callback address %q: %w", address, err)
		}
		addr, err := netip.ParseAddr(host)
		if err != nil {
			return fmt.Errorf("callback address %q: %w", address, err)
		}
		if why := refusal(addr, allowPrivate); why != "" {
			return fmt.Errorf("callback address %s refused: %s", addr, why)
		}
		return nil
	}
}
