// Progressive enhancement: tables marked data-sortable get sort buttons in their column headers.
// Without this script every table is still there, in the order the server chose.
(function () {
  "use strict";

  function cellValue(row, index) {
    var cell = row.cells[index];
    if (!cell) return "";
    var raw = cell.getAttribute("data-sort");
    if (raw === null) raw = cell.textContent.trim();
    var number = parseFloat(raw);
    return raw !== "" && !isNaN(number) && isFinite(raw) ? number : raw.toLowerCase();
  }

  function sortBy(table, header, index) {
    var body = table.tBodies[0];
    var ascending = header.getAttribute("aria-sort") !== "ascending";
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) { th.removeAttribute("aria-sort"); });
    header.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = cellValue(a, index), y = cellValue(b, index);
      if (typeof x !== typeof y) { x = String(x); y = String(y); }
      var order = x < y ? -1 : x > y ? 1 : 0;
      return ascending ? order : -order;
    });
    rows.forEach(function (row) { body.appendChild(row); });
  }

  document.querySelectorAll("table[data-sortable]").forEach(function (table) {
    if (!table.tHead || !table.tBodies.length) return;
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, index) {
      if (th.hasAttribute("data-nosort")) return;
      var button = document.createElement("button");
      button.type = "button";
      button.className = "sort";
      button.textContent = th.textContent.trim();
      button.setAttribute("aria-label", "Sort by " + th.textContent.trim());
      th.textContent = "";
      th.appendChild(button);
      button.addEventListener("click", function () { sortBy(table, th, index); });
    });
  });
})();
