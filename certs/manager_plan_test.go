package certs

import (
	"crypto/x509"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// planSummary is the comparable part of a renewal.
type planSummary struct {
	NewCA, NewServing, RewriteBundle bool
	// Keep are the serials of the CAs kept after the first one.
	Keep []string
	// SignedByOutgoing is set when the outgoing CA signs the new serving
	// certificate.
	SignedByOutgoing bool
}

func summarize(r renewal) planSummary {
	s := planSummary{NewCA: r.newCA, NewServing: r.newServing, RewriteBundle: r.rewriteBundle, SignedByOutgoing: r.outgoing != nil && r.newServing}
	for _, c := range r.keep {
		s.Keep = append(s.Keep, c.SerialNumber.String())
	}
	return s
}

func TestPlanRenewal(t *testing.T) {
	ca1 := mustCA(t, t0, 10*year)
	srv1 := mustServing(t, ca1, testNames, t0, year)
	// ca2 replaced ca1 after 7 years; srv7 was issued by ca1 shortly before.
	ca2 := mustCA(t, t0.Add(7*year), 10*year)
	srv7 := mustServing(t, ca1, testNames, t0.Add(6*year+300*day), year)
	srv2 := mustServing(t, ca2, testNames, t0.Add(7*year), year)
	foreign := mustCA(t, t0, 10*year)
	tinyCA := mustCA(t, t0, 30*day)
	serial := func(kp *KeyPair) string { return kp.Cert.SerialNumber.String() }
	with := func(d map[string][]byte, k string, v []byte) map[string][]byte {
		d = maps.Clone(d)
		d[k] = v
		return d
	}
	fresh := secretData([]*KeyPair{ca1}, srv1)

	tests := []struct {
		name string
		data map[string][]byte
		now  time.Time
		// rotateBefore zero means a third of the lifetime.
		rotateBefore time.Duration
		want         planSummary
	}{
		{name: "fresh", data: fresh, now: t0.Add(day)},
		{name: "fresh at issue", data: fresh, now: t0},
		{name: "empty secret", data: nil, now: t0,
			want: planSummary{NewCA: true, NewServing: true}},
		{name: "serving just before the last third", data: fresh, now: t0.Add(243 * day)},
		{name: "serving in its last third", data: fresh, now: t0.Add(9 * 30 * day),
			want: planSummary{NewServing: true}},
		{name: "serving expired", data: fresh, now: t0.Add(year + day),
			want: planSummary{NewServing: true}},
		{name: "serving fixed window not reached", data: fresh, now: t0.Add(year - 91*day), rotateBefore: 90 * day},
		{name: "serving fixed window reached", data: fresh, now: t0.Add(year - 89*day), rotateBefore: 90 * day,
			want: planSummary{NewServing: true}},
		{name: "clock before the CA", data: fresh, now: t0.Add(-2 * time.Hour),
			want: planSummary{NewCA: true, NewServing: true, RewriteBundle: true}},
		{name: "wrong names", data: secretData([]*KeyPair{ca1}, mustServing(t, ca1, ServiceDNSNames("old", "tollgate-system"), t0, year)), now: t0.Add(day),
			want: planSummary{NewServing: true}},
		{name: "missing a name", data: secretData([]*KeyPair{ca1}, mustServing(t, ca1, testNames[:3], t0, year)), now: t0.Add(day),
			want: planSummary{NewServing: true}},
		{name: "names in another order", data: secretData([]*KeyPair{ca1}, mustServing(t, ca1, []string{testNames[3], testNames[0], testNames[2], testNames[1]}, t0, year)), now: t0.Add(day)},
		{name: "garbage serving certificate", data: with(fresh, SecretKeyCert, []byte("garbage")), now: t0.Add(day),
			want: planSummary{NewServing: true}},
		{name: "serving key of another certificate", data: with(fresh, SecretKeyKey, ca1.KeyPEM), now: t0.Add(day),
			want: planSummary{NewServing: true}},
		{name: "serving signed by a foreign CA", data: secretData([]*KeyPair{ca1}, mustServing(t, foreign, testNames, t0, year)), now: t0.Add(day),
			want: planSummary{NewServing: true}},
		{name: "garbage CA bundle", data: with(fresh, SecretKeyCACert, []byte("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")), now: t0.Add(day),
			want: planSummary{NewCA: true, NewServing: true}},
		{name: "garbage CA key keeps the old CA and the serving certificate", data: with(fresh, SecretKeyCAKey, []byte("garbage")), now: t0.Add(day),
			want: planSummary{NewCA: true, Keep: []string{serial(ca1)}}},
		{name: "CA is not a CA", data: secretData([]*KeyPair{srv1}, srv1), now: t0.Add(day),
			want: planSummary{NewCA: true, NewServing: true, RewriteBundle: true}},
		{name: "CA in its last third keeps serving certificate", data: secretData([]*KeyPair{ca1}, srv7), now: t0.Add(7 * year),
			want: planSummary{NewCA: true, Keep: []string{serial(ca1)}}},
		{name: "CA and serving due together: outgoing CA signs", data: secretData([]*KeyPair{ca1}, mustServing(t, ca1, testNames, t0.Add(6*year), year)), now: t0.Add(7 * year),
			want: planSummary{NewCA: true, NewServing: true, Keep: []string{serial(ca1)}, SignedByOutgoing: true}},
		{name: "CA and serving due together: outgoing CA too short-lived", data: secretData([]*KeyPair{ca1}, mustServing(t, ca1, testNames, t0.Add(9*year), year)), now: t0.Add(9*year + 300*day),
			want: planSummary{NewCA: true, NewServing: true, Keep: []string{serial(ca1)}}},
		{name: "serving expired and CA due", data: fresh, now: t0.Add(7 * year),
			want: planSummary{NewCA: true, NewServing: true, Keep: []string{serial(ca1)}, SignedByOutgoing: true}},
		{name: "after CA rotation both CAs stay", data: secretData([]*KeyPair{ca2, ca1}, srv7), now: t0.Add(7*year + day),
			want: planSummary{Keep: []string{serial(ca1)}}},
		{name: "after CA rotation serving from the new CA", data: secretData([]*KeyPair{ca2, ca1}, srv2), now: t0.Add(7*year + day),
			want: planSummary{Keep: []string{serial(ca1)}}},
		{name: "serving from the old CA after it expired", data: secretData([]*KeyPair{ca2, ca1}, srv7), now: t0.Add(10*year + day),
			want: planSummary{NewServing: true, RewriteBundle: true}},
		{name: "old CA expired is dropped", data: secretData([]*KeyPair{ca2, ca1}, mustServing(t, ca2, testNames, t0.Add(10*year-day), year)), now: t0.Add(10*year + day),
			want: planSummary{RewriteBundle: true}},
		{name: "expired CA", data: fresh, now: t0.Add(10*year + day),
			want: planSummary{NewCA: true, NewServing: true, RewriteBundle: true}},
		{name: "short CA fixed window", data: secretData([]*KeyPair{tinyCA}, mustServing(t, tinyCA, testNames, t0, year)), now: t0.Add(25 * day), rotateBefore: 7 * day,
			want: planSummary{NewCA: true, NewServing: true, Keep: []string{serial(tinyCA)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := Options{Namespace: "tollgate-system", ServiceName: "tollgate-webhook", RotateBefore: tt.rotateBefore}.withDefaults()
			r := planRenewal(tt.data, testNames, tt.now, opts)
			if diff := cmp.Diff(tt.want, summarize(r)); diff != "" {
				t.Errorf("plan (-want +got):\n%s\nreasons: %q", diff, r.reasons)
			}
			if r.needed() != (len(r.reasons) > 0) {
				t.Errorf("needed() = %v with reasons %q", r.needed(), r.reasons)
			}

			// Renewing as planned must give a Secret that needs nothing more
			// at the same time, or replicas would rewrite it forever.
			m := NewManager(nil, opts)
			data, err := m.renew(r, tt.data, tt.now)
			if err != nil {
				t.Fatalf("renew: %v", err)
			}
			if again := planRenewal(data, testNames, tt.now, opts); again.needed() {
				t.Errorf("after renewal the Secret still needs %+v: %q", summarize(again), again.reasons)
			}
			if !r.needed() && !maps.EqualFunc(data, tt.data, func(a, b []byte) bool { return string(a) == string(b) }) {
				t.Errorf("renew changed a Secret that needed nothing")
			}
		})
	}
}

// TestRotationNeverBreaksStaleBundles runs the renewal over 25 years, with
// checks at several spacings. At every check the served certificate must
// verify against the bundle published at the check before (an API server
// that has not seen the latest caBundle yet).
func TestRotationNeverBreaksStaleBundles(t *testing.T) {
	for _, step := range []time.Duration{30 * day, 100 * day, 243 * day, 270 * day} {
		t.Run(step.String(), func(t *testing.T) {
			m := NewManager(nil, Options{Namespace: "tollgate-system", ServiceName: "tollgate-webhook"})
			var data map[string][]byte
			var prevBundle []*x509.Certificate
			writes, caRotations := 0, 0
			for now := t0; now.Before(t0.Add(25 * year)); now = now.Add(step) {
				r := planRenewal(data, testNames, now, m.opts)
				if r.needed() {
					var err error
					if data, err = m.renew(r, data, now); err != nil {
						t.Fatalf("%s: renew: %v", stamp(now), err)
					}
					writes++
					if r.newCA {
						caRotations++
					}
				}
				srv, err := ParseKeyPair(data[SecretKeyCert], data[SecretKeyKey])
				if err != nil {
					t.Fatalf("%s: %v", stamp(now), err)
				}
				bundle, err := parseCertificates(data[SecretKeyCACert])
				if err != nil {
					t.Fatalf("%s: bundle: %v", stamp(now), err)
				}
				if err := verify(srv.Cert, bundle, now); err != nil {
					t.Fatalf("%s: serving certificate does not verify against the current bundle: %v", stamp(now), err)
				}
				if prevBundle != nil {
					if err := verify(srv.Cert, prevBundle, now); err != nil {
						t.Fatalf("%s: serving certificate does not verify against the previous bundle: %v", stamp(now), err)
					}
				}
				for _, c := range bundle {
					if !validAt(c, now) {
						t.Errorf("%s: bundle holds CA %s valid until %s", stamp(now), c.SerialNumber, stamp(c.NotAfter))
					}
				}
				if len(bundle) > 2 {
					t.Errorf("%s: bundle holds %d CAs", stamp(now), len(bundle))
				}
				prevBundle = bundle
			}
			// Serving renewals (about 1.5 a year), CA rotations and drops
			// of expired CAs: never a write at every check.
			if writes > 2*25 || caRotations != 4 {
				t.Errorf("%d writes and %d CA rotations in 25 years, want at most 50 and 4 (creation included)", writes, caRotations)
			}
		})
	}
}

func TestOptionsValidate(t *testing.T) {
	tests := []struct {
		name    string
		opts    Options
		wantErr string
	}{
		{name: "defaults", opts: Options{Namespace: "ns", ServiceName: "svc"}},
		{name: "no namespace", opts: Options{ServiceName: "svc"}, wantErr: "invalid certificate options: namespace is required"},
		{name: "no service", opts: Options{Namespace: "ns"}, wantErr: "invalid certificate options: service name is required"},
		{name: "negative validity", opts: Options{Namespace: "ns", ServiceName: "svc", CertValidity: -time.Hour}, wantErr: "invalid certificate options: certificate validity -1h0m0s is not positive"},
		{name: "rotate before too long", opts: Options{Namespace: "ns", ServiceName: "svc", CertValidity: 30 * day, RotateBefore: 30 * day},
			wantErr: "invalid certificate options: rotate-before 720h0m0s must be shorter than the CA validity 87600h0m0s and the certificate validity 720h0m0s"},
		{name: "negative rotate before", opts: Options{Namespace: "ns", ServiceName: "svc", RotateBefore: -1}, wantErr: "rotate-before -1ns is negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.opts.withDefaults().validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("validate: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("validate error = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}
