// The MCP Apps sandbox proxy (ext-apps: "ui/notifications/sandbox-*"), served from the second origin
// (sidespin/web/sandbox.py). It runs in a frame of the chat page and does three things only:
//   1. tells the page it is ready (ui/notifications/sandbox-proxy-ready);
//   2. once, draws the app's HTML the page sends (ui/notifications/sandbox-resource-ready) in a frame
//      sandboxed without same-origin (an opaque origin: no cookies, no storage, no DOM of ours or the
//      page's), under this page's Content-Security-Policy, which that frame inherits;
//   3. relays every other message between the page (only from its origin) and the app (only from
//      its frame), never one the app names sandbox-*.
(() => {
  "use strict";
  const hostOrigin = document.documentElement.dataset.hostOrigin;
  if (window.top === window || !hostOrigin) {
    document.body.textContent = "This page only draws an MCP App inside sidespin's chat page.";
    return;
  }
  const SANDBOX = "ui/notifications/sandbox-";
  let inner = null;

  window.addEventListener("message", (event) => {
    const data = event.data;
    const method = data && typeof data === "object" && typeof data.method === "string" ? data.method : "";
    if (event.source === window.parent) {
      if (event.origin !== hostOrigin) return;
      if (method === SANDBOX + "resource-ready") {
        if (inner) return;  // one app per proxy, drawn once
        const params = data.params || {};
        inner = document.createElement("iframe");
        inner.setAttribute("sandbox", "allow-scripts allow-forms");
        inner.setAttribute("title", "MCP App");
        inner.srcdoc = typeof params.html === "string" ? params.html : "";
        document.body.appendChild(inner);
        return;
      }
      if (inner && inner.contentWindow) inner.contentWindow.postMessage(data, "*");
    } else if (inner && event.source === inner.contentWindow) {
      if (method.startsWith(SANDBOX)) return;
      window.parent.postMessage(data, hostOrigin);
    }
  });

  window.parent.postMessage({jsonrpc: "2.0", method: SANDBOX + "proxy-ready", params: {}}, hostOrigin);
})();
