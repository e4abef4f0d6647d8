// Hover read-out: the exact values of the point under the pointer.
(function () {
  var tip = document.getElementById("tip");
  document.addEventListener("mouseover", function (e) {
    var p = e.target.closest ? e.target.closest("[data-tip]") : null;
    if (!p) { tip.hidden = true; return; }
    tip.textContent = p.getAttribute("data-tip");
    tip.hidden = false;
  });
  document.addEventListener("mousemove", function (e) {
    tip.style.left = e.pageX + 14 + "px";
    tip.style.top = e.pageY + 14 + "px";
  });
})();
