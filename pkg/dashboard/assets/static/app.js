// Live pages: one server-sent event stream per tab says that the fleet
// changed; the tab then reloads its live region from this server (never
// from the hub). No polling.
(function () {
  "use strict";
  var live = document.getElementById("live");
  var conn = document.getElementById("conn");
  if (!live || !window.EventSource) { return; }
  // A live update never lands under a click: a region replaced between
  // the press and the release of a button takes the click away from it
  // (the press and the release hit different nodes, so no click fires and
  // no form is sent). Updates wait while a pointer is down in the region,
  // stop once a form of it is sent (the page is leaving), and an update
  // that changes nothing is not applied at all.
  var busy = false, again = false, holding = false, leaving = false, last = null;
  live.addEventListener("pointerdown", function () { holding = true; }, true);
  function release() {
    setTimeout(function () { holding = false; if (again) { again = false; reload(); } }, 0);
  }
  document.addEventListener("pointerup", release, true);
  document.addEventListener("pointercancel", release, true);
  live.addEventListener("submit", function () { leaving = true; }, true);
  function reload() {
    if (leaving) { return; }
    if (busy || holding) { again = true; return; }
    busy = true;
    fetch(location.href, { headers: { "X-Shepherd-Fragment": "1" }, credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (html) {
        if (html === null || html === last || leaving) { return; }
        if (holding) { again = true; return; }
        last = html;
        var focused = document.activeElement && document.activeElement.id;
        live.innerHTML = html;
        live.dataset.updates = String(Number(live.dataset.updates || "0") + 1);
        if (focused) { var el = document.getElementById(focused); if (el) { el.focus(); } }
        if (conn) { conn.textContent = "live · updated " + new Date().toLocaleTimeString(); }
      })
      .catch(function () {})
      .then(function () { busy = false; if (again) { again = false; reload(); } });
  }
  var es = new EventSource("/events");
  es.addEventListener("open", function () { if (conn) { conn.textContent = "live"; } });
  es.addEventListener("changed", reload);
  es.addEventListener("error", function () { if (conn) { conn.textContent = "reconnecting…"; } });
})();
