// Keyboard shortcuts and small conveniences for the review page; the server does all the work.
(function () {
  "use strict";
  const reviewer = document.getElementById("reviewer");
  if (reviewer) {
    reviewer.value = localStorage.getItem("km-reviewer") || "";
    reviewer.addEventListener("input", () => localStorage.setItem("km-reviewer", reviewer.value.trim()));
  }
  let pending = "reject";  // the decision Enter in the reason box submits

  // A refused decision (422: no reason, no reviewer) comes back as a panel with the message: show it.
  document.body.addEventListener("htmx:beforeSwap", (evt) => {
    if (evt.detail.xhr.status === 422) {
      evt.detail.shouldSwap = true;
      evt.detail.isError = false;
    }
  });

  // htmx gives focus back to an element with the same id after a swap; on a new task the reason box must not
  // keep it, or the next shortcut would be typed into it.
  document.body.addEventListener("htmx:afterSettle", () => {
    const active = document.activeElement;
    if (active && ["reason", "nl-edit", "tags-edit"].includes(active.id)) active.blur();
    pending = "reject";
  });

  function click(id) {
    const el = document.getElementById(id);
    if (el) el.click();
    return Boolean(el);
  }

  function askReason(decision) {
    const reason = document.getElementById("reason");
    if (!reason) return;
    if (reason.value.trim()) { click("btn-" + decision); return; }
    pending = decision;
    reason.placeholder = "reason for " + decision + ", then Enter";
    reason.focus();
  }

  document.addEventListener("keydown", (evt) => {
    const target = evt.target;
    if (target.id === "reason" && evt.key === "Enter") { evt.preventDefault(); click("btn-" + pending); return; }
    if (target.id === "nl-edit" && evt.key === "Enter" && (evt.ctrlKey || evt.metaKey)) {
      evt.preventDefault(); click("btn-save"); return;
    }
    if (evt.key === "Escape" && target.blur) { target.blur(); return; }
    if (["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName) || evt.ctrlKey || evt.metaKey || evt.altKey) return;
    const actions = {
      a: () => click("btn-accept"),
      r: () => askReason("reject"),
      e: () => askReason("needs-edit"),
      j: () => click("next"),
      k: () => click("prev"),
      n: () => {
        const box = document.getElementById("edit-box");
        if (box) { box.open = true; document.getElementById("nl-edit").focus(); }
      },
    };
    if (actions[evt.key]) { evt.preventDefault(); actions[evt.key](); }
  });
})();
