// Live pages: one server-sent event stream per tab says that the fleet
// changed; the tab then reloads its live region from this server (never
// from the hub). No polling.
(function () {
  "use strict";
  var live = document.getElementById("live");
  var conn = document.getElementById("conn");
  if (!live || !window.EventSource) { return; }
  var busy = false, again = false;
  function reload() {
    if (busy) { again = true; return; }
    busy = true;
    fetch(location.href, { headers: { "X-Shepherd-Fragment": "1" }, credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (html) {
        if (html === null) { return; }
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
