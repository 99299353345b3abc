package notify

import (
	"io"
	"log"
	_ "unsafe" // go:linkname

	_ "github.com/hashicorp/go-retryablehttp" // the webhook service's client
)

// retryableHTTPLogger is go-retryablehttp's default logger, which every
// client notifications-engine's webhook service makes logs to: a
// "[DEBUG] POST <url>" line per request on stderr, whatever the log level,
// and a webhook's URL is often its secret (a Slack or Teams incoming
// webhook). Its lines are dropped; tollgate logs a notification's outcome
// itself, without the URL.
//
//go:linkname retryableHTTPLogger github.com/hashicorp/go-retryablehttp.defaultLogger
var retryableHTTPLogger *log.Logger

func init() { retryableHTTPLogger.SetOutput(io.Discard) }
