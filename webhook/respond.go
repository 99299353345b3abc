package webhook

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/tollgate-dev/tollgate/policies"
)

// outcome is what the handler decided about one request, before it becomes
// a response, a log line and metrics.
type outcome struct {
	// decision is set for outcomes that were not judged (exempt, skipped,
	// errored); judged ones derive it from denials, warnings and audited.
	decision string
	// denials and warnings are "[rule-id] message" lines.
	denials  []string
	warnings []string
	// audited is set when audit mode turned deny violations into warnings.
	audited bool
	// rules are the ids of every violation found, for the log.
	rules []string
	// err and code describe a failure.
	err  error
	code int32
	// note says why a request was not judged, for the log.
	note string
}

// skipped is the outcome of a request that is not judged.
func skipped(why string) outcome { return outcome{decision: DecisionSkipped, note: why} }

// failed is the outcome of a request that could not be decided.
func failed(code int32, err error) outcome {
	return outcome{decision: DecisionErrored, err: err, code: code}
}

// decisionLabel returns the decision for metrics and logs.
func (o *outcome) decisionLabel() string {
	switch {
	case o.decision != "":
		return o.decision
	case len(o.denials) > 0:
		return DecisionDenied
	case o.audited:
		return DecisionAudited
	case len(o.warnings) > 0:
		return DecisionWarned
	default:
		return DecisionAllowed
	}
}

// verdict turns a decision into an outcome: deny violations deny (or, in
// audit mode, warn), warn violations warn. Violations are counted.
func (h *Handler) verdict(dec policies.Decision) outcome {
	var out outcome
	for _, v := range dec.Violations {
		line := violationLine(v)
		switch v.Severity {
		case policies.SeverityDeny:
			if h.mode == ModeAudit {
				out.warnings = append(out.warnings, line)
				out.audited = true
			} else {
				out.denials = append(out.denials, line)
			}
		case policies.SeverityWarn:
			out.warnings = append(out.warnings, line)
		default:
			continue
		}
		out.rules = append(out.rules, v.Rule)
		h.metrics.violations.WithLabelValues(v.Rule, string(v.Severity), string(h.mode)).Inc()
	}
	return out
}

// violationLine formats a violation as kubectl shows it after "denied the
// request: ": "[no-latest-tag] container "app" uses image ...".
func violationLine(v policies.Violation) string {
	return "[" + v.Rule + "] " + v.Message
}

// respond turns an outcome into the admission response, or into the error
// of a failed evaluation or lookup, which NewHTTPHandler answers with HTTP
// 500 so that the API server applies the failurePolicy. A malformed
// request is an error response with code 400 (a rejection). In audit mode
// a failure allows the request with a warning.
func (h *Handler) respond(out outcome) (admission.Response, error) {
	switch {
	case out.err != nil && h.mode == ModeAudit:
		return admission.Allowed("").WithWarnings("tollgate could not judge this request (audit mode allows it): " + out.err.Error()), nil
	case out.err != nil && out.code >= http.StatusInternalServerError:
		return admission.Response{}, out.err
	case out.err != nil:
		resp := admission.Errored(out.code, out.err)
		resp.Result.Reason = metav1.StatusReasonBadRequest
		return resp, nil
	case len(out.denials) > 0:
		return admission.Denied(strings.Join(out.denials, "\n")).WithWarnings(out.warnings...), nil
	default:
		return admission.Allowed("").WithWarnings(out.warnings...), nil
	}
}

// record writes the request's log line and metrics. The log line is V(1)
// for requests allowed without findings and V(0) otherwise; it names rule
// ids, never objects or their data.
func (h *Handler) record(ctx context.Context, req admission.Request, out outcome, d time.Duration) {
	decision := out.decisionLabel()
	kind := req.Kind.Kind
	if kind == "" {
		kind = "unknown"
	}
	h.metrics.requests.WithLabelValues(kind, string(req.Operation), decision).Inc()
	h.metrics.duration.Observe(d.Seconds())

	log := logr.FromContextOrDiscard(ctx).WithValues("decision", decision, "duration", d)
	if req.DryRun != nil && *req.DryRun {
		log = log.WithValues("dryRun", true)
	}
	switch decision {
	case DecisionErrored:
		log.Error(out.err, "admission decision")
	case DecisionAllowed, DecisionExempt, DecisionSkipped:
		if out.note != "" {
			log = log.WithValues("reason", out.note)
		}
		log.V(1).Info("admission decision")
	default:
		log.Info("admission decision", "rules", out.rules, "warnings", len(out.warnings))
	}
}
