package egress

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEgressRuleMatch(t *testing.T) {
	type testCase struct {
		name  string
		hosts []string
		host  string
		port  string
		want  bool
	}
	for _, tc := range []testCase{
		{name: "name on 443", hosts: []string{"example.com"}, host: "example.com", port: "443", want: true},
		{name: "name on 80", hosts: []string{"example.com"}, host: "EXAMPLE.com.", port: "80", want: true},
		{name: "name on another port", hosts: []string{"example.com"}, host: "example.com", port: "22"},
		{name: "name with its port", hosts: []string{"example.com:8443"}, host: "example.com", port: "8443", want: true},
		{name: "name with any port", hosts: []string{"example.com:*"}, host: "example.com", port: "5432", want: true},
		{name: "subdomain is not the name", hosts: []string{"example.com"}, host: "api.example.com", port: "443"},
		{name: "wildcard subdomain", hosts: []string{"*.example.com"}, host: "api.example.com", port: "443", want: true},
		{name: "wildcard is not the apex", hosts: []string{"*.example.com"}, host: "example.com", port: "443"},
		{name: "suffix trick", hosts: []string{"*.example.com"}, host: "evilexample.com", port: "443"},
		{name: "address", hosts: []string{"203.0.113.7"}, host: "203.0.113.7", port: "443", want: true},
		{name: "address with port", hosts: []string{"203.0.113.7:9000"}, host: "203.0.113.7", port: "9000", want: true},
		{name: "prefix", hosts: []string{"10.0.0.0/8"}, host: "10.1.2.3", port: "80", want: true},
		{name: "ipv6 with port", hosts: []string{"[2001:db8::1]:8080"}, host: "2001:db8::1", port: "8080", want: true},
		{name: "a name does not match an address", hosts: []string{"example.com"}, host: "93.184.216.34", port: "443"},
		{name: "nothing listed", host: "example.com", port: "443"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := newPolicy(Allowlist{Hosts: tc.hosts})
			require.NoError(t, err)
			_, ok := p.match(tc.host, tc.port)
			assert.Equal(t, tc.want, ok)
		})
	}
}

func TestEgressRuleErrors(t *testing.T) {
	for _, h := range []string{"", "exa mple.com", "*", "a*b.com", "example.com:99999", "user@example.com", ".example.com"} {
		_, err := newPolicy(Allowlist{Hosts: []string{h}})
		assert.ErrorIs(t, err, ErrInvalidRule, h)
		var re *RuleError
		if assert.ErrorAs(t, err, &re, h) {
			assert.Equal(t, h, re.Entry)
		}
	}
}

func TestRefuseAddr(t *testing.T) {
	type testCase struct {
		name         string
		addr         string
		rule         string
		allowPrivate bool
		refused      bool
	}
	for _, tc := range []testCase{
		{name: "public address by name", addr: "93.184.216.34", rule: "example.com"},
		{name: "metadata even when listed", addr: "169.254.169.254", rule: "169.254.169.254", refused: true},
		{name: "link-local even with AllowPrivate", addr: "169.254.1.1", rule: "x.com", allowPrivate: true, refused: true},
		{name: "mapped metadata address", addr: "::ffff:169.254.169.254", rule: "x.com", refused: true},
		{name: "azure wire server", addr: "168.63.129.16", rule: "168.63.129.16", refused: true},
		{name: "aws ipv6 metadata", addr: "fd00:ec2::254", rule: "x.com", allowPrivate: true, refused: true},
		{name: "ipv6 link-local", addr: "fe80::1", rule: "x.com", refused: true},
		{name: "unspecified", addr: "0.0.0.0", rule: "x.com", refused: true},
		{name: "name resolving to loopback", addr: "127.0.0.1", rule: "x.com", refused: true},
		{name: "name resolving to private", addr: "10.0.0.5", rule: "x.com", refused: true},
		{name: "name resolving to shared", addr: "100.64.0.1", rule: "x.com", refused: true},
		{name: "name resolving to private, allowed", addr: "10.0.0.5", rule: "x.com", allowPrivate: true},
		{name: "listed private address", addr: "127.0.0.1", rule: "127.0.0.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := newPolicy(Allowlist{Hosts: []string{tc.rule}, AllowPrivate: tc.allowPrivate})
			require.NoError(t, err)
			r, err := parseRule(tc.rule)
			require.NoError(t, err)
			why := p.refuseAddr(netip.MustParseAddr(tc.addr), r)
			assert.Equal(t, tc.refused, why != "", why)
		})
	}
}
