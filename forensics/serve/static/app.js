// Marks a finding's cited messages when its evidence link is followed (tables sort with the report's own script).
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
})();
