package audit

import (
	"context"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
)

// excludedNamespaces returns the namespaces the webhook configuration
// WebhookConfigName never sends: those no webhook's namespaceSelector
// selects. Without the configuration nothing is excluded.
func (a *Auditor) excludedNamespaces(ctx context.Context) (map[string]bool, error) {
	if a.opts.WebhookConfigName == "" {
		return nil, nil
	}
	var vwc admissionregistrationv1.ValidatingWebhookConfiguration
	err := a.opts.Client.Get(ctx, types.NamespacedName{Name: a.opts.WebhookConfigName}, &vwc)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read ValidatingWebhookConfiguration %s: %w", a.opts.WebhookConfigName, err)
	}
	var selectors []labels.Selector
	for _, w := range vwc.Webhooks {
		if w.NamespaceSelector == nil {
			return nil, nil // one webhook sees every namespace
		}
		sel, err := metav1.LabelSelectorAsSelector(w.NamespaceSelector)
		if err != nil {
			return nil, fmt.Errorf("ValidatingWebhookConfiguration %s: webhook %s: namespaceSelector: %w", vwc.Name, w.Name, err)
		}
		selectors = append(selectors, sel)
	}
	var nss corev1.NamespaceList
	if err := a.opts.Client.List(ctx, &nss); err != nil {
		return nil, fmt.Errorf("list namespaces: %w", err)
	}
	excluded := map[string]bool{}
	for _, ns := range nss.Items {
		set := labels.Set(ns.Labels)
		selected := false
		for _, sel := range selectors {
			selected = selected || sel.Matches(set)
		}
		if !selected {
			excluded[ns.Name] = true
		}
	}
	return excluded, nil
}
