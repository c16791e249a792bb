// report.html's only script: opens a finding's evidence from the embedded messages, sorts tables. No network.
(function () {
  "use strict";
  var node = document.getElementById("evidence-data");
  var data = node ? JSON.parse(node.textContent) : {};
  var CONTEXT = 2;
  function esc(s) {
    return String(s).replace(/[&<>"]/g, function (c) {
      return {"&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;"}[c];
    });
  }
  function size(b) { return b >= 1024 ? (b / 1024).toFixed(1) + " KB" : b + " B"; }
  function message(m, cited) {
    var out = "<div class=\"msg role-" + esc(m.r) + (cited ? " cited" : "") + "\" data-position=\"" + m.p + "\">" +
      "<div class=mh><b>[" + m.p + "] " + esc(m.r) + "</b>" + (m.t ? " · " + esc(m.t) : "") + " · " + size(m.b) +
      "</div>";
    if (m.x) {
      out += "<div class=mt>" + esc(m.x) + (m.c > m.x.length ?
        "<span class=cut> … (" + m.x.length + " of " + m.c + " characters shown)</span>" : "") + "</div>";
    }
    if (m.k.length) {
      out += "<details class=calls><summary>" + m.k.length + " tool call" + (m.k.length > 1 ? "s" : "") +
        "</summary>" + m.k.map(function (k) {
          return "<div>→ " + esc(k[0]) + "(" + esc(k[1]) + ")" + (k[2] === null ? " · no result" :
            " · result [" + k[2] + "] " + size(k[3] || 0) + (k[4] ? " <span class=err>error</span>" : "")) + "</div>";
        }).join("") + "</details>";
    }
    return out + "</div>";
  }
  function fill(d) {
    var conv = data[d.dataset.c] || {};
    var cited = d.dataset.p ? d.dataset.p.split(",").map(Number) : [];
    var want = {};
    cited.forEach(function (p) { for (var q = Math.max(0, p - CONTEXT); q <= p + CONTEXT; q++) want[q] = true; });
    var ps = Object.keys(want).map(Number).filter(function (p) { return conv[p]; }).sort(function (a, b) { return a - b; });
    var html = "", prev = null;
    ps.forEach(function (p) {
      if (prev !== null && p > prev + 1) html += "<div class=gap>…</div>";
      html += message(conv[p], cited.indexOf(p) >= 0);
      prev = p;
    });
    d.querySelector(".ev").innerHTML = html || "<p class=meta>no message at these positions</p>";
  }
  document.querySelectorAll("details.finding").forEach(function (d) {
    d.addEventListener("toggle", function () {
      if (d.open && !d.dataset.filled) { fill(d); d.dataset.filled = "1"; }
    });
  });
  function key(text) {
    var m = text.replace(/,/g, "").match(/^[-+–]?\d+(\.\d+)?/);
    return m ? parseFloat(m[0].replace("–", "-")) : null;
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    table.querySelectorAll("thead th").forEach(function (th, i) {
      th.addEventListener("click", function () {
        var asc = th.getAttribute("aria-sort") !== "ascending";
        table.querySelectorAll("thead th").forEach(function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", asc ? "ascending" : "descending");
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = a.cells[i] ? a.cells[i].textContent : "", y = b.cells[i] ? b.cells[i].textContent : "";
          var kx = key(x), ky = key(y);
          var c = kx !== null && ky !== null ? kx - ky : x.localeCompare(y);
          return asc ? c : -c;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
  function openHash() {
    var el = location.hash && document.getElementById(location.hash.slice(1));
    var d = el && (el.tagName === "DETAILS" ? el : el.querySelector("details.finding"));
    if (d) { d.open = true; }
  }
  window.addEventListener("hashchange", openHash);
  openHash();
})();
