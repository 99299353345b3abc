// Package notify sends Argo CD's notifications with the library Argo CD's
// notifications controller is built on, github.com/argoproj/notifications-engine:
// its parser of argocd-notifications-cm and argocd-notifications-secret,
// its triggers, templates, subscriptions and every one of its services
// (webhook, Slack, email, GitHub, Microsoft Teams, PagerDuty, Opsgenie,
// Mattermost, Google Chat, Telegram, Alertmanager, Grafana, ...), so that a
// configuration behaves as it does in Argo CD.
//
// What tollgate keeps of its own is the loop around the library. Parse
// reads the configuration and builds every service once (a configuration
// that does not parse, or names a service the library refuses, is refused
// whole). Config.Evaluate judges one Application against every trigger it
// is subscribed to, with the expression functions of Argo CD (Functions:
// time, strings, repo, sync), renders what is due and returns it with the
// new notified state, which the caller keeps in the Application's
// notified.notifications.argoproj.io annotation, in Argo CD's format,
// before anything is sent, so that each notification goes out once. A
// Dispatcher delivers them off the caller's path, retrying a failing
// receiver with backoff.
package notify
