// MCP Apps on the chat page: the host side of the ext-apps bridge (io.modelcontextprotocol/ui, 2026-01-26).
//
// A tool card whose result has an app holds a `.app-view` (sidespin/web/apps.py: AppFrame). For each one
// this frames the sandbox proxy from the second origin (another port: sidespin/web/sandbox.py), hands it
// the app's HTML when it is ready, and then speaks JSON-RPC with the app through it:
//   app -> page  ui/initialize, ping, tools/call (via /apps/call: its own server's tools only, under the
//                conversation's approvals, a question drawn in the card when a person must answer),
//                ui/message (sent from the composer, as if typed), ui/update-model-context (/apps/context),
//                ui/open-link (a link drawn for the person), ui/request-display-mode (inline only),
//                ui/notifications/{initialized,size-changed,request-teardown}, notifications/message
//   page -> app  ui/notifications/tool-input and tool-result once the app is initialized,
//                ui/resource-teardown before its frame goes
// Only messages from that frame's window and the sandbox origin are read; an app that sends more than the
// page takes (FLOOD per second, or more calls at once than CALLS) is stopped and its frame removed.
(function () {
  "use strict";
  var PROTOCOL = "2026-01-26";
  var FLOOD = 120;          // messages a second an app may send
  var CALLS = 8;            // tool calls of one app under way at once
  var MESSAGE_GAP = 3000;   // ms between two ui/message of one app
  var MAX_HEIGHT = 1600, MIN_HEIGHT = 60, START_HEIGHT = 360;
  var bridges = new Map();  // .app-view element -> its bridge

  function cid() {
    var field = document.querySelector("#composer [name=cid]");
    return field ? field.value : "";
  }

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function post(path, body) {
    return fetch(path, {method: "POST", headers: {"Content-Type": "application/json"},
                        body: JSON.stringify(body), credentials: "same-origin"})
      .then(function (response) { return response.json().catch(function () { return {}; }); });
  }

  function Bridge(view) {
    this.view = view;
    this.callId = view.dataset.callId;
    this.stage = view.querySelector(".app-stage");
    this.asks = view.querySelector(".app-asks");
    this.log = view.querySelector(".app-log");
    this.frame = null;
    this.origin = "";
    this.data = null;
    this.ready = false;       // the app said ui/notifications/initialized
    this.handed = false;      // the sandbox got the HTML
    this.stopped = false;
    this.window = {start: 0, count: 0};
    this.calls = 0;
    this.lastMessage = 0;
    this.nextId = 1;
    this.waiting = new Map(); // id of a request to the app -> its resolve
    this.listener = this.receive.bind(this);
  }

  Bridge.prototype.start = function () {
    var self = this;
    var card = self.view.closest("details.tool-call");
    if (card) card.open = true;  // an app is there to be seen
    view_status(self, "loading the app…");
    fetch(self.view.dataset.view + "?cid=" + encodeURIComponent(cid()) + "&call_id=" +
          encodeURIComponent(self.callId), {credentials: "same-origin"})
      .then(function (response) { return response.json(); })
      .then(function (data) {
        if (self.stopped) return;
        if (data.status === "error") { view_status(self, "⚠ the app cannot be drawn: " + data.error); return; }
        self.data = data;
        self.origin = location.protocol + "//" + location.hostname + ":" + data.sandbox.port;
        var frame = el("iframe", "app-frame");
        frame.setAttribute("sandbox", "allow-scripts allow-same-origin");
        frame.setAttribute("title", "app of " + data.server);
        frame.setAttribute("referrerpolicy", "no-referrer");
        frame.style.height = START_HEIGHT + "px";
        frame.src = self.origin + data.sandbox.path + "?csp=" + encodeURIComponent(JSON.stringify(data.csp || {}));
        if (data.prefersBorder === false) self.view.classList.add("borderless");
        self.frame = frame;
        window.addEventListener("message", self.listener);
        self.stage.textContent = "";
        self.stage.appendChild(frame);
      })
      .catch(function (error) { view_status(self, "⚠ the app cannot be drawn: " + error); });
  };

  function view_status(bridge, text) {
    bridge.stage.textContent = "";
    bridge.stage.appendChild(el("div", "app-note", text));
  }

  Bridge.prototype.note = function (text, cls) {
    var line = el("div", "app-line" + (cls ? " " + cls : ""), text);
    this.log.appendChild(line);
    while (this.log.children.length > 6) this.log.removeChild(this.log.firstChild);
    return line;
  };

  Bridge.prototype.send = function (message) {
    if (this.frame && this.frame.contentWindow && !this.stopped) this.frame.contentWindow.postMessage(message, this.origin);
  };
  Bridge.prototype.reply = function (id, result) { this.send({jsonrpc: "2.0", id: id, result: result || {}}); };
  Bridge.prototype.fail = function (id, message, code) {
    this.send({jsonrpc: "2.0", id: id, error: {code: code || -32000, message: String(message)}});
  };
  Bridge.prototype.notify = function (method, params) { this.send({jsonrpc: "2.0", method: method, params: params || {}}); };

  Bridge.prototype.flooded = function () {
    var now = Date.now();
    if (now - this.window.start > 1000) this.window = {start: now, count: 0};
    this.window.count += 1;
    return this.window.count > FLOOD;
  };

  Bridge.prototype.receive = function (event) {
    if (this.stopped || !this.frame || event.source !== this.frame.contentWindow || event.origin !== this.origin) return;
    if (this.flooded()) { this.stop("it sent more than " + FLOOD + " messages in a second"); return; }
    var data = event.data;
    if (!data || typeof data !== "object" || data.jsonrpc !== "2.0") return;
    if (typeof data.method !== "string") {  // an answer to a request of ours
      var resolve = this.waiting.get(data.id);
      if (resolve) { this.waiting.delete(data.id); resolve(data); }
      return;
    }
    var params = data.params && typeof data.params === "object" ? data.params : {};
    if (data.id === undefined || data.id === null) { this.notification(data.method, params); return; }
    if (typeof data.id !== "number" && typeof data.id !== "string") return;
    this.request(data.id, data.method, params);
  };

  Bridge.prototype.notification = function (method, params) {
    if (method === "ui/notifications/sandbox-proxy-ready") {
      if (this.handed) return;
      this.handed = true;
      this.notify("ui/notifications/sandbox-resource-ready", {html: this.data.html, csp: this.data.csp || {},
                                                              permissions: {}});
    } else if (method === "ui/notifications/initialized") {
      if (this.ready) return;
      this.ready = true;
      this.notify("ui/notifications/tool-input", {arguments: this.data.input || {}});
      this.notify("ui/notifications/tool-result", this.data.result);
      this.view.dataset.state = "ready";
    } else if (method === "ui/notifications/size-changed") {
      var height = Number(params.height);
      if (isFinite(height) && height > 0) {
        this.frame.style.height = Math.max(MIN_HEIGHT, Math.min(MAX_HEIGHT, Math.ceil(height))) + "px";
      }
    } else if (method === "ui/notifications/request-teardown") {
      this.teardown("the app asked to close");
    } else if (method === "notifications/message") {
      console.debug("[app " + this.data.server + "]", params.level, params.data);
    }
  };

  Bridge.prototype.request = function (id, method, params) {
    var self = this;
    if (method === "ui/initialize") {
      self.reply(id, {
        protocolVersion: PROTOCOL,
        hostInfo: {name: "sidespin", version: "1"},
        hostCapabilities: {serverTools: {}, logging: {}, openLinks: {}, updateModelContext: {text: {}},
                           message: {text: {}}, sandbox: {permissions: {}, csp: self.data.csp || {}}},
        hostContext: {
          toolInfo: {id: self.callId, tool: self.data.tool},
          theme: window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light",
          displayMode: "inline", availableDisplayModes: ["inline"],
          containerDimensions: {maxHeight: MAX_HEIGHT},
          locale: navigator.language, timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
          platform: "web", userAgent: "sidespin",
        },
      });
    } else if (method === "ping") {
      self.reply(id, {});
    } else if (method === "tools/call") {
      self.toolCall(id, params);
    } else if (method === "ui/message") {
      self.message(id, params);
    } else if (method === "ui/update-model-context") {
      post("/apps/context", {cid: cid(), call_id: self.callId, content: params.content,
                             structuredContent: params.structuredContent})
        .then(function (answer) {
          if (answer.status === "success") { self.reply(id, {}); self.note("the app told the model something for the next turn"); }
          else self.fail(id, answer.error || "refused");
        }, function (error) { self.fail(id, error); });
    } else if (method === "ui/open-link") {
      self.openLink(id, params);
    } else if (method === "ui/request-display-mode") {
      self.reply(id, {mode: "inline"});
    } else {
      self.fail(id, "sidespin does not offer " + String(method).slice(0, 80) + " to apps", -32601);
    }
  };

  Bridge.prototype.toolCall = function (id, params) {
    var self = this;
    var name = typeof params.name === "string" ? params.name : "";
    if (!name) { self.fail(id, "tools/call needs a tool name", -32602); return; }
    if (self.calls >= CALLS) { self.fail(id, "too many calls of this app under way; wait for one to end"); return; }
    self.calls += 1;
    var done = function () { self.calls -= 1; };
    var answered = function (answer) {
      done();
      if (answer.status === "success") {
        self.reply(id, answer.result);
        self.note("the app ran " + name + " · " + Number(answer.seconds || 0).toFixed(2) + " s", "ran");
      } else {
        self.fail(id, answer.error || "refused");
        self.note("the app's call of " + name + " was not run: " + (answer.error || "refused"), "refused");
      }
    };
    post("/apps/call", {cid: cid(), call_id: self.callId, name: name, arguments: params.arguments || {}})
      .then(function (answer) {
        if (answer.status !== "ask") { answered(answer); return; }
        self.ask(answer, answered);
      }, function (error) { done(); self.fail(id, error); });
  };

  // The person decides, in the card: the app cannot reach these buttons (another origin, another frame).
  Bridge.prototype.ask = function (question, answered) {
    var box = el("div", "app-ask");
    box.dataset.ask = question.ask;
    box.appendChild(el("span", "app-ask-text", "The app asks to run "));
    box.appendChild(el("code", "app-ask-tool", question.tool));
    box.appendChild(el("pre", "app-ask-args", JSON.stringify(question.arguments || {})));
    var allow = el("button", "approve app-allow", "Allow");
    var refuse = el("button", "approve n app-refuse", "Refuse");
    allow.type = refuse.type = "button";
    function choose(yes) {
      allow.disabled = refuse.disabled = true;
      post("/apps/answer", {cid: cid(), ask: question.ask, allow: yes})
        .then(function (answer) { box.remove(); answered(answer); },
              function (error) { box.remove(); answered({status: "error", error: String(error)}); });
    }
    allow.addEventListener("click", function () { choose(true); });
    refuse.addEventListener("click", function () { choose(false); });
    box.appendChild(allow);
    box.appendChild(refuse);
    this.asks.appendChild(box);
  };

  Bridge.prototype.message = function (id, params) {
    var content = Array.isArray(params.content) ? params.content : [params.content];
    var text = content.filter(function (block) { return block && block.type === "text" && typeof block.text === "string"; })
      .map(function (block) { return block.text; }).join("\n").trim();
    var now = Date.now();
    var box = document.getElementById("msg");
    if (!text) { this.fail(id, "ui/message needs text content", -32602); return; }
    if (now - this.lastMessage < MESSAGE_GAP) { this.fail(id, "the app sent a message a moment ago; wait"); return; }
    if (!box || !box.form) { this.fail(id, "this page has no composer"); return; }
    if (box.value.trim()) { this.fail(id, "the person is writing a message; theirs is not replaced"); return; }
    this.lastMessage = now;
    box.value = text;
    htmx.trigger(box.form, "submit");
    this.note("the app sent a message in your name");
    this.reply(id, {});
  };

  Bridge.prototype.openLink = function (id, params) {
    var url;
    try { url = new URL(String(params.url)); } catch (error) { this.fail(id, "Invalid URL", -32602); return; }
    if (url.protocol !== "https:" && url.protocol !== "http:") { this.fail(id, "Invalid URL", -32602); return; }
    var line = this.note("the app offers a link: ");
    var link = el("a", "", url.href);
    link.href = url.href;
    link.target = "_blank";
    link.rel = "noopener noreferrer nofollow";
    line.appendChild(link);
    this.reply(id, {});
  };

  // Tell the app it goes (ui/resource-teardown), wait a moment for its answer, then remove its frame.
  Bridge.prototype.teardown = function (reason) {
    var self = this;
    if (self.stopped) return Promise.resolve();
    var id = "teardown-" + (self.nextId++);
    var answered = new Promise(function (resolve) { self.waiting.set(id, resolve); });
    self.send({jsonrpc: "2.0", id: id, method: "ui/resource-teardown", params: {reason: reason}});
    var late = new Promise(function (resolve) { setTimeout(function () { resolve(null); }, 500); });
    return Promise.race([answered, late]).then(function (answer) {
      self.view.dataset.teardown = answer ? "answered" : "not answered";
      self.stop(null, reason);
    });
  };

  Bridge.prototype.stop = function (why, closed) {
    if (this.stopped) return;
    this.stopped = true;
    window.removeEventListener("message", this.listener);
    if (this.frame) this.frame.remove();
    this.frame = null;
    this.view.dataset.state = why ? "stopped" : "closed";
    view_status(this, why ? "⚠ the app was stopped: " + why : "the app closed (" + closed + ")");
    if (why) console.warn("APP_STOPPED", this.callId, why);
  };

  function scan(root) {
    var views = root.querySelectorAll ? root.querySelectorAll(".app-view[data-call-id]") : [];
    if (root.matches && root.matches(".app-view[data-call-id]")) views = [root].concat(Array.from(views));
    Array.prototype.forEach.call(views, function (view) {
      if (bridges.has(view)) return;
      var bridge = new Bridge(view);
      bridges.set(view, bridge);
      bridge.start();
    });
  }

  function forget() {
    bridges.forEach(function (bridge, view) {
      if (!view.isConnected) { bridge.stop(null, "its card was drawn again"); bridges.delete(view); }
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    scan(document);
    new MutationObserver(function (records) {
      records.forEach(function (record) {
        record.addedNodes.forEach(function (node) { if (node.nodeType === 1) scan(node); });
      });
      forget();
    }).observe(document.body, {childList: true, subtree: true});
  });
  // A frame about to go with its card (an update draws the card again) or with the page is told first; neither
  // waits for the app's answer.
  function leaving(bridge, reason) {
    bridge.send({jsonrpc: "2.0", id: "teardown-" + (bridge.nextId++), method: "ui/resource-teardown",
                 params: {reason: reason}});
  }
  document.addEventListener("htmx:oobBeforeSwap", function (event) {
    var target = event.detail.target, fragment = event.detail.fragment;
    var first = fragment && fragment.firstElementChild;
    if (!target || !first || !first.id || first.id !== target.id) return;  // appended to, not replaced
    bridges.forEach(function (bridge, view) { if (target.contains(view)) leaving(bridge, "its card is drawn again"); });
  });
  window.addEventListener("pagehide", function () {
    bridges.forEach(function (bridge) { leaving(bridge, "the page closes"); });
  });
})();
