// Package notify sends Argo CD's notifications: the triggers, templates,
// services and subscriptions of argocd-notifications-cm (with
// argocd-notifications-secret's values for the services' $references), in
// the format of Argo CD's notifications controller, written for tollgate
// rather than taken from argoproj/notifications-engine (whose dozens of
// service SDKs tollgate does not need; see docs/notifications.md).
//
// Parse reads the configuration. Config.Evaluate judges one Application
// against every subscribed trigger and returns the notifications due and
// the new notified state, which the caller keeps in the Application's
// notified.notifications.argoproj.io annotation, as Argo CD does, so that
// each goes out once per trigger, condition, destination and oncePer value.
// A Dispatcher delivers them off the caller's path, retrying a failing
// receiver with backoff. The services are webhook, slack (chat.postMessage;
// an incoming webhook is a webhook service) and email (SMTP with
// STARTTLS).
package notify
