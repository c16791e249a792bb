// Marks a finding's cited messages when its evidence link is followed, on this page or, when the evidence is in
// another window of the transcript, once that window loads (?f=N); tables sort with the report's own script.
(function () {
  "use strict";
  function mark(n) {
    document.querySelectorAll(".msg.target").forEach(function (m) { m.classList.remove("target"); });
    document.querySelectorAll(".msg[data-findings]").forEach(function (m) {
      if (m.dataset.findings.split(",").indexOf(n) >= 0) m.classList.add("target");
    });
  }
  document.querySelectorAll("a.goto").forEach(function (a) {
    a.addEventListener("click", function () { mark(a.dataset.finding); });
  });
  var f = new URLSearchParams(location.search).get("f");
  if (f) mark(f);
})();
