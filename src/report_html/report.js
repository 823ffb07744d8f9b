// kix verify --report: expand or collapse every section, and highlight one workload's pods when
// its row in a verdict table is clicked (click again to clear). Changes classes and `open` only.
(function () {
  "use strict";
  function all(open) {
    document.querySelectorAll("details").forEach(function (d) { d.open = open; });
  }
  document.getElementById("expand-all").addEventListener("click", function () { all(true); });
  document.getElementById("collapse-all").addEventListener("click", function () { all(false); });
  var focused = null;
  document.querySelectorAll("tr.legend-entry").forEach(function (row) {
    row.addEventListener("click", function () {
      var key = row.getAttribute("data-workload");
      var cluster = row.closest(".cluster");
      document.querySelectorAll(".focus").forEach(function (e) { e.classList.remove("focus"); });
      focused = focused === key ? null : key;
      document.body.classList.toggle("focusing", focused !== null);
      if (focused === null) { return; }
      row.classList.add("focus");
      cluster.querySelectorAll(".pods svg").forEach(function (g) {
        if (g.getAttribute("data-workload") === key) { g.classList.add("focus"); }
      });
    });
  });
})();
