// The memory console's only script (no dependencies): the live timeline over server-sent
// events, times in the viewer's zone, and keyboard shortcuts. Rows arrive as HTML the server
// rendered and escaped.
"use strict";

// Times arrive as <time datetime="...Z">... UTC</time>; shown in the viewer's own zone.
function localTimes(root) {
  const zone = new Intl.DateTimeFormat(undefined, { timeZoneName: "short" });
  const two = (n) => String(n).padStart(2, "0");
  root.querySelectorAll("time[datetime]").forEach((node) => {
    const at = new Date(node.getAttribute("datetime"));
    if (Number.isNaN(at.getTime())) return;
    const name = zone.formatToParts(at).find((part) => part.type === "timeZoneName");
    node.title = node.textContent;
    node.textContent = `${at.getFullYear()}-${two(at.getMonth() + 1)}-${two(at.getDate())} ` +
      `${two(at.getHours())}:${two(at.getMinutes())}${name ? " " + name.value : ""}`;
    node.classList.add("local");
  });
}

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
      localTimes(row);
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
  localTimes(document);
  startLive();
  startKeys();
});
