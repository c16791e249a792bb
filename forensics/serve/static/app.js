// The explorer's only script: marks a finding's cited messages when its evidence link is followed; sorts tables.
(function () {
  "use strict";
  document.querySelectorAll("a.goto").forEach(function (a) {
    a.addEventListener("click", function () {
      var n = a.dataset.finding;
      document.querySelectorAll(".msg.target").forEach(function (m) { m.classList.remove("target"); });
      document.querySelectorAll(".msg[data-findings]").forEach(function (m) {
        if (m.dataset.findings.split(",").indexOf(n) >= 0) m.classList.add("target");
      });
    });
  });
  function key(t) { var m = t.replace(/,/g, "").match(/^-?\d+(\.\d+)?/); return m ? parseFloat(m[0]) : null; }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    table.querySelectorAll("thead th").forEach(function (th, i) {
      th.addEventListener("click", function () {
        var asc = th.getAttribute("aria-sort") !== "ascending";
        table.querySelectorAll("thead th").forEach(function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", asc ? "ascending" : "descending");
        var rows = Array.prototype.slice.call(table.tBodies[0].rows);
        rows.sort(function (a, b) {
          var x = a.cells[i].textContent, y = b.cells[i].textContent, kx = key(x), ky = key(y);
          var c = kx !== null && ky !== null ? kx - ky : x.localeCompare(y);
          return asc ? c : -c;
        });
        rows.forEach(function (r) { table.tBodies[0].appendChild(r); });
      });
    });
  });
})();
