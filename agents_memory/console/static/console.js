// The memory console's only script (no dependencies): the live timeline over server-sent
// events, and keyboard shortcuts. Rows arrive as HTML the server rendered and escaped.
"use strict";

function startLive() {
  const state = document.getElementById("live-state");
  const turns = document.getElementById("turns");
  if (!state || !turns || !window.EventSource) return;
  const source = new EventSource(state.dataset.live);
  source.addEventListener("open", () => state.classList.add("on"));
  source.addEventListener("error", () => state.classList.remove("on"));
  source.addEventListener("turns", (event) => {
    const holder = document.createElement("div");
    holder.innerHTML = event.data;
    const fresh = Array.from(holder.children).filter(
      (row) => !document.getElementById(row.id)
    );
    fresh.reverse().forEach((row) => {
      row.classList.add("fresh");
      turns.prepend(row);
    });
  });
}

function typing(target) {
  return target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName));
}

function startKeys() {
  let leader = false;
  document.addEventListener("keydown", (event) => {
    if (typing(event.target) || event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === "/") {
      event.preventDefault();
      const box = document.getElementById("q");
      if (box) box.focus(); else window.location.href = "/search";
      return;
    }
    if (leader) {
      leader = false;
      const link = document.querySelector(`nav a[accesskey="${event.key}"]`);
      if (link) window.location.href = link.getAttribute("href");
      return;
    }
    leader = event.key === "g";
  });
  if (window.location.hash.startsWith("#turn-")) {
    const turn = document.getElementById(window.location.hash.slice(1));
    if (turn) turn.focus();
  }
}

document.addEventListener("DOMContentLoaded", () => {
  startLive();
  startKeys();
});
