// Live updates: the server pushes "namespace/name" of each changed
// Application this person may see (server-sent events, one stream per
// page, fed by one watch on the server); the page then re-fetches its
// main part. Nothing polls.
(function () {
  "use strict";
  var watch = document.body.dataset.watch;
  if (!watch || !window.EventSource) return;
  var live = document.getElementById("live");
  var pending = null;
  var busy = false;

  function refresh() {
    pending = null;
    if (busy) { pending = setTimeout(refresh, 300); return; }
    busy = true;
    fetch(location.href, { headers: { "X-Tollgate-Fragment": "1" }, credentials: "same-origin" })
      .then(function (res) { return res.ok ? res.text() : null; })
      .then(function (html) {
        if (html === null) return;
        var main = document.querySelector("main");
        // Keep what the person is typing in a filter.
        var active = document.activeElement;
        if (active && main.contains(active) && active.tagName === "INPUT") return;
        main.innerHTML = html;
        document.dispatchEvent(new CustomEvent("tollgate:refreshed"));
      })
      .finally(function () { busy = false; });
  }

  var es = new EventSource("/events");
  es.onopen = function () { if (live) live.hidden = false; };
  es.onerror = function () { if (live) live.hidden = true; };
  es.addEventListener("application", function (ev) {
    if (watch !== "*" && ev.data !== watch) return;
    if (pending === null) pending = setTimeout(refresh, 250);
  });
})();
