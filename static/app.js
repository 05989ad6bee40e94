// The few lines of JavaScript the page needs: the status dot, Enter to send, keeping the log scrolled.
(function () {
  "use strict";
  var downTimer = null;

  function setStatus(state) {
    var status = document.getElementById("status");
    if (!status) return;
    status.dataset.state = state;
    status.querySelector(".label").textContent = state;
  }

  document.addEventListener("htmx:sseOpen", function (event) {
    if (event.target.id !== "status") return;
    clearTimeout(downTimer);
    downTimer = null;
    setStatus("connected");
  });

  document.addEventListener("htmx:sseError", function (event) {
    if (event.target.id !== "status") return;
    setStatus("reconnecting");
    if (!downTimer) downTimer = setTimeout(function () { setStatus("down"); }, 20000);
  });

  function nearBottom(el) { return el.scrollHeight - el.scrollTop - el.clientHeight < 120; }
  var stick = true;
  document.addEventListener("scroll", function (event) {
    if (event.target.id === "chat") stick = nearBottom(event.target);
  }, true);
  function follow() {
    var chat = document.getElementById("chat");
    if (chat && stick) chat.scrollTop = chat.scrollHeight;
  }
  document.addEventListener("htmx:afterSettle", follow);
  document.addEventListener("htmx:sseMessage", follow);
  document.addEventListener("DOMContentLoaded", function () { stick = true; follow(); });

  // An accepted message clears the composer (kept out of the markup: the CSP allows no inline script).
  document.addEventListener("htmx:afterRequest", function (event) {
    var form = event.detail.elt;
    if (form && form.id === "composer" && event.detail.successful) form.reset();
  });

  // Esc stops the running answer (its Stop button), wherever the focus is.
  document.addEventListener("keydown", function (event) {
    if (event.key !== "Escape") return;
    var buttons = document.querySelectorAll(".turn-state[data-state='running'] .stop");
    if (buttons.length) buttons[buttons.length - 1].click();
  });

  document.addEventListener("keydown", function (event) {
    var box = event.target;
    if (box.id !== "msg" || event.key !== "Enter" || event.shiftKey || event.isComposing) return;
    event.preventDefault();
    if (box.value.trim()) htmx.trigger(box.form, "submit");
  });
})();
