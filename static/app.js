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
  // A live answer's tail appends its streamed text (hx-swap="beforeend"); a `block` message to it carries the
  // blocks completed since, rendered (TurnWatch): they go after the answer's other blocks, and the tail, whose
  // text they are, starts again empty.
  document.addEventListener("htmx:sseBeforeMessage", function (event) {
    var tail = event.target;
    if (event.detail.type !== "block" || !tail.classList.contains("tail")) return;
    event.preventDefault();
    var blocks = document.getElementById(tail.id.replace(/-tail$/, "-blocks"));
    htmx.swap(blocks, event.detail.data, {swapStyle: "beforeend", swapDelay: 0, settleDelay: 0});
    tail.textContent = "";
  });
  document.addEventListener("htmx:afterSettle", follow);
  document.addEventListener("htmx:sseMessage", follow);
  document.addEventListener("DOMContentLoaded", function () {
    // a search hit opens the conversation at its message (/c/ID#turn-3): show that one, not the end
    var target = location.hash && document.getElementById(decodeURIComponent(location.hash.slice(1)));
    if (target && target.closest("#chat")) {
      stick = false;
      target.scrollIntoView({block: "center"});
    } else {
      stick = true;
      follow();
    }
  });

  // The sidebar's list (or its search results) is drawn again once a message is sent and once an answer ends.
  function conversationsChanged() { document.body.dispatchEvent(new CustomEvent("conversations-changed")); }
  document.addEventListener("htmx:afterRequest", function (event) {
    if (event.detail.elt && event.detail.elt.id === "composer" && event.detail.successful) conversationsChanged();
  });
  document.addEventListener("htmx:sseClose", function (event) {
    if (event.detail.type === "message" && event.target.closest("#chat")) conversationsChanged();
  });

  // Ctrl+K (Cmd+K) searches every conversation from the sidebar's box.
  document.addEventListener("keydown", function (event) {
    if (!(event.ctrlKey || event.metaKey) || event.key.toLowerCase() !== "k") return;
    var box = document.getElementById("search");
    if (!box) return;
    event.preventDefault();
    box.focus();
    box.select();
  });

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

  // Versions: ↑ in an empty composer edits your last message; in an edit, Enter sends and Esc closes it.
  document.addEventListener("keydown", function (event) {
    var box = event.target;
    if (box.id === "msg" && event.key === "ArrowUp" && box.value === "" && !event.isComposing) {
      var edits = document.querySelectorAll(".msg.user details.edit");
      if (!edits.length) return;
      event.preventDefault();
      var last = edits[edits.length - 1];
      last.open = true;
      var area = last.querySelector("textarea");
      area.focus();
      area.setSelectionRange(area.value.length, area.value.length);
      area.scrollIntoView({block: "nearest"});
    } else if (box.classList && box.classList.contains("edit-text") && !event.isComposing) {
      if (event.key === "Escape") { box.closest("details").open = false; document.getElementById("msg").focus(); }
      if (event.key !== "Enter" || event.shiftKey) return;
      event.preventDefault();
      if (box.value.trim()) htmx.trigger(box.form, "submit");
    }
  });

  // A refused edit, regenerate or fork says why beside its buttons; a refused Sign in or Restart beside its server's;
  // a choice that could not be recorded beside the approval buttons.
  document.addEventListener("htmx:responseError", function (event) {
    var elt = event.detail.elt, place = null;
    var tools = elt.closest && elt.closest(".msg-tools");
    var actions = elt.closest && (elt.closest(".server-actions") || elt.closest(".approvals"));
    if (tools) place = tools.querySelector(".version-error");
    else if (actions) place = actions.querySelector(".action-error");
    if (!place) return;
    var xhr = event.detail.xhr, shown;
    try { shown = JSON.parse(xhr.responseText).error; } catch (e) { shown = xhr.responseText; }
    place.textContent = shown || ("error " + xhr.status);
  });

  // Import: the sidebar's form, or a file dropped anywhere on the page; a refusal names the line it cannot read.
  function importFile(file) {
    var status = document.getElementById("import-status");
    var body = new FormData();
    body.append("file", file, file.name);
    status.dataset.state = "busy";
    status.textContent = "importing " + file.name + "…";
    fetch("/import", {method: "POST", body: body, headers: {"Accept": "application/json"}, credentials: "same-origin"})
      .then(function (response) {
        return response.json().catch(function () { return {error: "error " + response.status}; });
      })
      .then(function (answer) {
        if (answer.url) { window.location.assign(answer.url); return; }
        status.dataset.state = "error";
        status.textContent = "Not imported: " + (answer.error || "unknown error");
      }, function (error) {
        status.dataset.state = "error";
        status.textContent = "Not imported: " + error;
      });
  }
  document.addEventListener("submit", function (event) {
    if (event.target.id !== "import-form") return;
    event.preventDefault();
    var input = event.target.querySelector("input[type=file]");
    if (input.files.length) importFile(input.files[0]);
  });
  document.addEventListener("change", function (event) {
    if (event.target.id === "import-file" && event.target.files.length) importFile(event.target.files[0]);
  });
  function carriesFiles(event) {
    return event.dataTransfer && Array.prototype.indexOf.call(event.dataTransfer.types, "Files") >= 0;
  }
  document.addEventListener("dragover", function (event) {
    if (!carriesFiles(event)) return;
    event.preventDefault();
    document.body.classList.add("dropping");
  });
  document.addEventListener("dragleave", function (event) {
    if (!event.relatedTarget) document.body.classList.remove("dropping");
  });
  document.addEventListener("drop", function (event) {
    if (!carriesFiles(event)) return;
    event.preventDefault();
    document.body.classList.remove("dropping");
    if (event.dataTransfer.files.length) importFile(event.dataTransfer.files[0]);
  });
})();
