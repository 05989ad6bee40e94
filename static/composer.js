// `@` and `/` in the composer: a list to choose a resource (a chip) or a prompt (its text in the textarea).
// The lists, forms and chips are drawn by the server (sidespin/web/composer.py); this file only asks and places them.
(function () {
  "use strict";
  var menu = {open: null, start: 0, query: null, timer: null, asked: 0};

  function $(id) { return document.getElementById(id); }
  function box() { return $("msg"); }

  function ask(url, options) {
    options = options || {};
    options.credentials = "same-origin";
    options.headers = {"HX-Request": "true"};  // FastHTML answers a fragment, not a whole page
    return fetch(url, options).then(function (response) {
      return response.text().then(function (text) {
        if (response.ok) return text;
        var shown;
        try { shown = JSON.parse(text).error; } catch (e) { shown = text; }
        throw new Error(shown || ("error " + response.status));
      });
    });
  }

  function post(url, fields) {
    var body = new URLSearchParams();
    Object.keys(fields).forEach(function (key) { body.append(key, fields[key]); });
    return ask(url, {method: "POST", body: body});
  }

  function showError(text) { $("composer-error").textContent = text || ""; }

  // ---- what the person is typing: "@query" before the caret, or "/query" as the whole composer
  function trigger() {
    var area = box(), caret = area.selectionStart, before = area.value.slice(0, caret);
    var slash = /^\/(\S*)$/.exec(area.value);
    if (slash && caret === area.value.length) return {kind: "/", start: 0, query: slash[1]};
    var at = /(^|\s)@(\S*)$/.exec(before);
    if (at) return {kind: "@", start: caret - at[2].length - 1, query: at[2]};
    return null;
  }

  function closeMenu() {
    var list = $("composer-menu");
    menu.open = null;
    menu.query = null;
    list.hidden = true;
    list.innerHTML = "";
  }

  function items() { return Array.prototype.slice.call($("composer-menu").querySelectorAll(".menu-item")); }

  function select(index) {
    var all = items();
    all.forEach(function (item, i) { item.classList.toggle("selected", i === index); item.setAttribute("aria-selected", i === index); });
    if (all[index]) all[index].scrollIntoView({block: "nearest"});
  }

  function selected() {
    var all = items();
    for (var i = 0; i < all.length; i++) if (all[i].classList.contains("selected")) return i;
    return -1;
  }

  function refresh() {
    var found = trigger();
    if (!found) { closeMenu(); return; }
    if (menu.open === found.kind && menu.query === found.query) return;
    menu.open = found.kind;
    menu.start = found.start;
    menu.query = found.query;
    clearTimeout(menu.timer);
    menu.timer = setTimeout(function () {
      var asked = ++menu.asked;
      var path = found.kind === "@" ? "/composer/resources" : "/composer/prompts";
      ask(path + "?q=" + encodeURIComponent(found.query)).then(function (html) {
        if (asked !== menu.asked || !menu.open) return;  // an older answer, or closed meanwhile
        var list = $("composer-menu");
        list.innerHTML = html;
        list.hidden = false;
        list.dataset.kind = found.kind;
        select(0);
      }, function (error) { showError(String(error.message || error)); });
    }, 120);
  }

  // ---- choosing
  function dropTrigger() {
    var area = box(), caret = area.selectionStart;
    area.value = area.value.slice(0, menu.start) + area.value.slice(caret);
    area.setSelectionRange(menu.start, menu.start);
  }

  function addChip(html) {
    var holder = document.createElement("div");
    holder.innerHTML = html;
    var chip = holder.firstElementChild;
    if (!chip) return;
    var same = $("chips").querySelector('.chip[data-uri="' + CSS.escape(chip.dataset.uri) + '"]');
    if (!same) $("chips").appendChild(chip);
  }

  function openPanel(url) {
    var panel = $("composer-panel");
    return ask(url).then(function (html) {
      panel.innerHTML = html;
      panel.hidden = false;
      var form = panel.querySelector(".panel-form");
      var first = panel.querySelector("input");
      if (form && form.dataset.args === "0") submitPanel(form);  // a prompt without arguments: no form to fill
      else if (first) first.focus();
    });
  }

  function closePanel() {
    var panel = $("composer-panel");
    panel.hidden = true;
    panel.innerHTML = "";
    box().focus();
  }

  function choose(item) {
    var data = item.dataset, query = "?server=" + encodeURIComponent(data.server) + "&name=" + encodeURIComponent(data.name);
    dropTrigger();
    closeMenu();
    showError("");
    if (data.kind === "resource") {
      post("/composer/chip", {server: data.server, uri: data.uri, name: data.name}).then(addChip, function (e) { showError(e.message); });
      box().focus();
    } else if (data.kind === "template") {
      openPanel("/composer/template_form" + query + "&template=" + encodeURIComponent(data.template))
        .catch(function (e) { showError(e.message); });
    } else if (data.kind === "prompt") {
      openPanel("/composer/prompt_form" + query).catch(function (e) { showError(e.message); });
    }
  }

  function submitPanel(form) {
    var values = {}, missing = [];
    form.querySelectorAll("input[data-field]").forEach(function (input) {
      if (input.value.trim()) values[input.dataset.field] = input.value;
      else if (input.required) missing.push(input.dataset.field);
    });
    var error = form.querySelector(".panel-error");
    if (missing.length) { error.textContent = "fill in " + missing.join(", "); return; }
    error.textContent = "";
    var data = form.dataset;
    if (data.action === "/composer/chip") {
      post(data.action, {server: data.server, name: data.name, template: data.template, values: JSON.stringify(values)})
        .then(function (html) { addChip(html); closePanel(); }, function (e) { error.textContent = e.message; });
    } else {
      post(data.action, {server: data.server, name: data.name, arguments: JSON.stringify(values)})
        .then(function (text) {
          var area = box();
          area.value = JSON.parse(text).text;
          closePanel();
          area.setSelectionRange(area.value.length, area.value.length);
        }, function (e) { error.textContent = e.message; });
    }
  }

  // ---- events: ours run first (capture), so Enter and Esc choose and close instead of sending and stopping
  document.addEventListener("input", function (event) { if (event.target.id === "msg") refresh(); });
  document.addEventListener("click", function (event) {
    if (event.target.id === "msg") { refresh(); return; }
    var item = event.target.closest && event.target.closest("#composer-menu .menu-item");
    if (item) { choose(item); return; }
    if (event.target.classList.contains("chip-remove")) { event.target.closest(".chip").remove(); box().focus(); return; }
    if (event.target.classList.contains("panel-submit")) submitPanel(event.target.closest(".panel-form"));
    if (event.target.classList.contains("panel-cancel")) closePanel();
  });

  document.addEventListener("keydown", function (event) {
    if (event.isComposing) return;
    var inPanel = event.target.closest && event.target.closest("#composer-panel");
    if (inPanel && (event.key === "Enter" || event.key === "Escape")) {
      event.preventDefault();
      event.stopPropagation();
      if (event.key === "Enter") submitPanel(event.target.closest(".panel-form"));
      else closePanel();
      return;
    }
    if (event.target.id !== "msg" || !menu.open || $("composer-menu").hidden) return;
    var count = items().length, at = selected();
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      if (!count) return;
      select((at + (event.key === "ArrowDown" ? 1 : count - 1)) % count);
    } else if ((event.key === "Enter" || event.key === "Tab") && at >= 0) {
      choose(items()[at]);
    } else if (event.key === "Escape") {
      closeMenu();
    } else {
      return;
    }
    event.preventDefault();
    event.stopPropagation();
  }, true);

  // A message sent: its chips went with it. A message refused: say why; the text and chips stay.
  document.addEventListener("htmx:afterRequest", function (event) {
    var form = event.detail.elt;
    if (!form || form.id !== "composer") return;
    if (event.detail.successful) {
      $("chips").innerHTML = "";
      showError("");
      closeMenu();
    }
  });
  document.addEventListener("htmx:responseError", function (event) {
    if (!event.detail.elt || event.detail.elt.id !== "composer") return;
    var xhr = event.detail.xhr, shown;
    try { shown = JSON.parse(xhr.responseText).error; } catch (e) { shown = xhr.responseText; }
    showError(shown || ("error " + xhr.status));
  });
})();
