extension WebAssets {
    /// The stylesheet of the web page, served at `/app.css`.
    static let css = #"""
/* fileshare web page: one stylesheet, no external resources. */
:root {
  --bg: #f6f7f9;
  --surface: #ffffff;
  --surface-2: #f0f2f5;
  --text: #1b1f24;
  --muted: #5f6b7a;
  --border: #dde1e6;
  --accent: #2563eb;
  --accent-text: #ffffff;
  --accent-soft: #e3ecff;
  --danger: #c62828;
  --danger-soft: #fdeaea;
  --ok: #1b7f3a;
  --warn-bg: #fff4d6;
  --warn-text: #6b4a00;
  --focus: #2563eb;
  --shadow: 0 6px 24px rgba(15, 23, 42, 0.14);
  --radius: 10px;
  --row-h: 3.25rem;
  --cols: 2.25rem 2.5rem minmax(0, 1fr) 7rem 10.5rem 9.5rem;
  color-scheme: light dark;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #111418;
    --surface: #1a1e24;
    --surface-2: #232831;
    --text: #e7eaee;
    --muted: #9aa5b4;
    --border: #2f3540;
    --accent: #5b8cff;
    --accent-text: #0b1020;
    --accent-soft: #1f2c4a;
    --danger: #ff6b6b;
    --danger-soft: #3a1d20;
    --ok: #4cc27a;
    --warn-bg: #3d3010;
    --warn-text: #ffdf8a;
    --focus: #8fb0ff;
    --shadow: 0 6px 24px rgba(0, 0, 0, 0.5);
  }
}
body.read-only { --cols: 0 2.5rem minmax(0, 1fr) 7rem 10.5rem 2.75rem; }

*, *::before, *::after { box-sizing: border-box; }
[hidden] { display: none !important; }
html { -webkit-text-size-adjust: 100%; }
body {
  margin: 0;
  font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  background: var(--bg);
  color: var(--text);
  padding-bottom: env(safe-area-inset-bottom);
}
body.has-uploads main { padding-bottom: 12rem; }
a { color: var(--accent); }
button, input, select { font: inherit; color: inherit; }
:focus-visible { outline: 2px solid var(--focus); outline-offset: 2px; }
.visually-hidden {
  position: absolute !important; width: 1px; height: 1px; padding: 0; margin: -1px;
  overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; border: 0;
}
.skip-link { position: absolute; left: -999px; top: 0; z-index: 100; background: var(--surface); padding: .5rem 1rem; }
.skip-link:focus { left: .5rem; top: .5rem; }

/* icons */
svg.icon { width: 1.25em; height: 1.25em; flex: none; stroke: currentColor; fill: none; stroke-width: 2; stroke-linecap: round; stroke-linejoin: round; vertical-align: middle; }

/* buttons */
.button {
  display: inline-flex; align-items: center; justify-content: center; gap: .4rem;
  min-height: 2.5rem; padding: .4rem .85rem; border-radius: 8px;
  border: 1px solid var(--border); background: var(--surface); color: var(--text);
  text-decoration: none; cursor: pointer; white-space: nowrap; font-weight: 500;
}
.button:hover { background: var(--surface-2); }
.button.primary { background: var(--accent); border-color: var(--accent); color: var(--accent-text); }
.button.primary:hover { filter: brightness(1.08); }
.button.danger { color: var(--danger); }
.button.primary.danger { background: var(--danger); border-color: var(--danger); color: #fff; }
.button.small { min-height: 2rem; padding: .2rem .6rem; font-size: .85rem; }
.button:disabled { opacity: .5; cursor: default; }
.icon-button {
  display: inline-flex; align-items: center; justify-content: center;
  width: 2.25rem; height: 2.25rem; padding: 0; border: 0; border-radius: 8px;
  background: transparent; color: var(--muted); cursor: pointer; text-decoration: none; flex: none;
}
.icon-button:hover { background: var(--surface-2); color: var(--text); }
.icon-button.delete:hover, .icon-button.cancel:hover { color: var(--danger); background: var(--danger-soft); }

/* top bar */
.topbar {
  display: flex; align-items: center; justify-content: space-between; gap: .75rem; flex-wrap: wrap;
  padding: .75rem 1.25rem; background: var(--surface); border-bottom: 1px solid var(--border);
  padding-top: max(.75rem, env(safe-area-inset-top));
}
.brand { display: flex; align-items: center; gap: .5rem; min-width: 0; }
.brand-icon { color: var(--accent); display: inline-flex; }
.brand-icon svg { width: 1.6rem; height: 1.6rem; }
.brand h1 { font-size: 1.15rem; margin: 0; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.badge { font-size: .75rem; padding: .1rem .5rem; border-radius: 999px; background: var(--surface-2); color: var(--muted); border: 1px solid var(--border); }
.topbar-actions { display: flex; gap: .5rem; flex-wrap: wrap; }
body.read-only .write-action { display: none !important; }
body.read-only .list-header .col-check { visibility: hidden; }

/* breadcrumb */
#breadcrumb { padding: .6rem 1.25rem 0; overflow-x: auto; scrollbar-width: thin; }
#breadcrumb ol { list-style: none; display: flex; align-items: center; margin: 0; padding: 0; white-space: nowrap; }
#breadcrumb li { display: flex; align-items: center; }
#breadcrumb li + li::before { content: "/"; color: var(--muted); padding: 0 .35rem; }
#breadcrumb a { display: inline-flex; align-items: center; gap: .3rem; padding: .3rem .45rem; border-radius: 6px; text-decoration: none; color: var(--text); font-weight: 500; }
#breadcrumb a:hover { background: var(--surface-2); }
#breadcrumb a[aria-current="page"] { color: var(--text); font-weight: 700; }
#breadcrumb a.drop-target { background: var(--accent-soft); outline: 2px dashed var(--accent); }

/* toolbar */
.toolbar { display: flex; gap: .75rem; align-items: center; padding: .6rem 1.25rem; flex-wrap: wrap; }
.search { position: relative; flex: 1 1 16rem; max-width: 28rem; display: flex; align-items: center; }
.search > span { position: absolute; left: .7rem; color: var(--muted); display: inline-flex; pointer-events: none; }
.search input {
  width: 100%; min-height: 2.5rem; padding: .4rem .75rem .4rem 2.3rem; border-radius: 8px;
  border: 1px solid var(--border); background: var(--surface);
}
.toolbar #download-zip { margin-left: auto; }

/* selection bar */
.selection-bar {
  position: sticky; top: 0; z-index: 5; display: flex; align-items: center; justify-content: space-between; gap: .75rem; flex-wrap: wrap;
  margin: 0 1.25rem .5rem; padding: .45rem .75rem; border-radius: var(--radius);
  background: var(--accent-soft); border: 1px solid var(--accent);
}
.selection-actions { display: flex; gap: .5rem; flex-wrap: wrap; }

/* list */
main { padding: 0 1.25rem 2rem; }
.list-header, .file-list > li { display: grid; grid-template-columns: var(--cols); align-items: center; column-gap: .5rem; }
.list-header {
  padding: 0 .5rem; min-height: 2.25rem; color: var(--muted); font-size: .85rem;
  border-bottom: 1px solid var(--border);
}
.list-header .col-name { grid-column: 2 / 4; }
.list-header .col-size { justify-self: end; }
.sort { background: none; border: 0; padding: .35rem .25rem; cursor: pointer; color: var(--muted); font-weight: 600; display: inline-flex; align-items: center; gap: .25rem; text-align: left; justify-self: start; border-radius: 6px; }
.sort:hover { color: var(--text); }
.sort[aria-pressed="true"] { color: var(--text); }
.sort-arrow { display: inline-block; width: .8em; }
.col-check { display: flex; justify-content: center; }
input[type="checkbox"] { width: 1.1rem; height: 1.1rem; accent-color: var(--accent); cursor: pointer; margin: 0; }

.file-list { list-style: none; margin: 0; padding: 0; background: var(--surface); border: 1px solid var(--border); border-top: 0; border-radius: 0 0 var(--radius) var(--radius); }
.file-list:empty { display: none; }
.file-list > li {
  min-height: var(--row-h); padding: .25rem .5rem; border-top: 1px solid var(--border); position: relative;
}
.file-list > li:first-child { border-top: 0; }
.file-list > li:hover { background: var(--surface-2); }
.file-list > li.selected { background: var(--accent-soft); }
.file-list > li.flash { animation: flash 1.6s ease-out; }
.file-list > li.drop-target { background: var(--accent-soft); outline: 2px dashed var(--accent); outline-offset: -2px; }
.file-list > li:focus-within { background: var(--surface-2); }
.file-list > li.selected:focus-within { background: var(--accent-soft); }
@keyframes flash { from { background: #ffe58a; } to { background: transparent; } }
.file-list .check { display: flex; justify-content: center; }
.thumb { width: 2.5rem; height: 2.5rem; display: flex; align-items: center; justify-content: center; border-radius: 6px; overflow: hidden; color: var(--muted); }
.thumb { position: relative; }
.thumb img { position: absolute; inset: 0; width: 100%; height: 100%; object-fit: cover; display: block; opacity: 0; border-radius: 6px; }
.thumb.has-thumb img { opacity: 1; }
.thumb.has-thumb svg { visibility: hidden; }
.thumb svg { width: 1.6rem; height: 1.6rem; stroke-width: 1.6; }
li[data-kind="directory"] .thumb { color: var(--accent); }
li[data-kind="directory"] .thumb svg { fill: var(--accent-soft); }
.name-cell { min-width: 0; display: flex; align-items: center; gap: .5rem; }
.open {
  color: var(--text); text-decoration: none; font-weight: 500; overflow: hidden; text-overflow: ellipsis; white-space: nowrap;
  padding: .35rem 0; border-radius: 4px; min-width: 0;
}
.open:hover { text-decoration: underline; }
.open mark { background: #ffe58a; color: inherit; border-radius: 2px; }
.tag { font-size: .72rem; padding: .05rem .45rem; border-radius: 999px; background: var(--warn-bg); color: var(--warn-text); white-space: nowrap; flex: none; }
.tag.writing::before { content: ""; display: inline-block; width: .5rem; height: .5rem; border-radius: 50%; background: currentColor; margin-right: .3rem; animation: pulse 1s infinite alternate; vertical-align: .05rem; }
@keyframes pulse { from { opacity: .3; } to { opacity: 1; } }
.meta { display: contents; }
.size { text-align: right; color: var(--muted); font-variant-numeric: tabular-nums; white-space: nowrap; font-size: .9rem; }
.date { color: var(--muted); white-space: nowrap; font-size: .9rem; font-variant-numeric: tabular-nums; }
.actions { display: flex; justify-content: flex-end; gap: .1rem; }

.empty { text-align: center; padding: 3rem 1rem; color: var(--muted); background: var(--surface); border: 1px solid var(--border); border-top: 0; border-radius: 0 0 var(--radius) var(--radius); }
.empty svg { width: 2.5rem; height: 2.5rem; stroke-width: 1.4; display: block; margin: 0 auto .75rem; }
.empty p { margin: .25rem 0; }
.status { color: var(--muted); font-size: .85rem; margin: .6rem .25rem; min-height: 1.2em; }

/* uploads */
.upload-panel {
  position: fixed; right: 1rem; bottom: 1rem; z-index: 20; width: min(27rem, calc(100vw - 2rem));
  background: var(--surface); border: 1px solid var(--border); border-radius: var(--radius); box-shadow: var(--shadow);
  display: flex; flex-direction: column; max-height: min(60vh, 32rem);
}
.upload-panel-head { display: flex; align-items: center; gap: .5rem; padding: .5rem .5rem .5rem .9rem; border-bottom: 1px solid var(--border); }
.upload-panel-head h2 { font-size: 1rem; margin: 0; }
#uploads-summary { flex: 1; color: var(--muted); font-size: .85rem; min-width: 0; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.upload-panel.collapsed .uploads { display: none; }
.upload-panel.collapsed #uploads-toggle svg { transform: rotate(180deg); }
.uploads { list-style: none; margin: 0; padding: 0; overflow-y: auto; }
.uploads > li { display: grid; grid-template-columns: minmax(0, 1fr) auto; gap: .15rem .5rem; padding: .55rem .6rem .55rem .9rem; border-top: 1px solid var(--border); }
.uploads > li:first-child { border-top: 0; }
.upload-name { font-weight: 500; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; font-size: .92rem; }
.upload-buttons { grid-row: 1 / 3; grid-column: 2; display: flex; align-items: center; }
.upload-progress { width: 100%; height: .4rem; appearance: none; -webkit-appearance: none; border: 0; border-radius: 999px; background: var(--surface-2); overflow: hidden; }
.upload-progress::-webkit-progress-bar { background: var(--surface-2); border-radius: 999px; }
.upload-progress::-webkit-progress-value { background: var(--accent); border-radius: 999px; transition: width .2s; }
.upload-progress::-moz-progress-bar { background: var(--accent); border-radius: 999px; }
li[data-state="done"] .upload-progress::-webkit-progress-value { background: var(--ok); }
li[data-state="done"] .upload-progress::-moz-progress-bar { background: var(--ok); }
li[data-state="failed"] .upload-progress::-webkit-progress-value, li[data-state="paused"] .upload-progress::-webkit-progress-value { background: var(--muted); }
li[data-state="failed"] .upload-progress::-moz-progress-bar, li[data-state="paused"] .upload-progress::-moz-progress-bar { background: var(--muted); }
.upload-status { grid-column: 1; font-size: .8rem; color: var(--muted); font-variant-numeric: tabular-nums; }
li[data-state="failed"] .upload-status { color: var(--danger); }
li[data-state="done"] .upload-status { color: var(--ok); }
li[data-state="cancelled"] { opacity: .65; }

/* messages */
/* desktop: bottom left (the upload panel is bottom right); phone: top */
.messages {
  position: fixed; left: 1rem; bottom: 1rem; z-index: 60;
  display: flex; flex-direction: column; gap: .5rem; width: min(28rem, calc(100vw - 2rem)); pointer-events: none;
}
.toast {
  pointer-events: auto; display: flex; align-items: flex-start; gap: .6rem; padding: .7rem .6rem .7rem .9rem;
  border-radius: var(--radius); background: var(--surface); border: 1px solid var(--border); box-shadow: var(--shadow);
  border-left: 4px solid var(--accent); animation: toast-in .18s ease-out;
}
.toast.error { border-left-color: var(--danger); }
.toast.success { border-left-color: var(--ok); }
.toast .toast-icon { color: var(--accent); padding-top: .1rem; display: inline-flex; }
.toast.error .toast-icon { color: var(--danger); }
.toast.success .toast-icon { color: var(--ok); }
.toast-text { flex: 1; min-width: 0; overflow-wrap: anywhere; }
.toast .icon-button { width: 1.9rem; height: 1.9rem; margin: -.3rem 0; }
@keyframes toast-in { from { transform: translateY(6px); } }

/* connection banner */
.banner {
  position: sticky; top: 0; z-index: 50; display: flex; align-items: center; justify-content: center; gap: .6rem;
  padding: .55rem 1rem; background: var(--warn-bg); color: var(--warn-text); font-weight: 600; border-bottom: 1px solid rgba(0,0,0,.08);
}
.spinner { width: 1rem; height: 1rem; border-radius: 50%; border: 2px solid currentColor; border-right-color: transparent; animation: spin .8s linear infinite; flex: none; }
@keyframes spin { to { transform: rotate(360deg); } }

/* drag and drop */
.drop-overlay {
  position: fixed; inset: 0; z-index: 40; pointer-events: none; display: flex; align-items: flex-end; justify-content: center;
  padding: 1.5rem; background: rgba(37, 99, 235, .08); border: 3px dashed var(--accent);
}
.drop-box { display: flex; align-items: center; gap: .75rem; padding: .9rem 1.4rem; border-radius: var(--radius); background: var(--accent); color: var(--accent-text); box-shadow: var(--shadow); font-weight: 600; }
.drop-box p { margin: 0; }
.drop-box svg { width: 1.6rem; height: 1.6rem; }

/* dialogs */
dialog { color: var(--text); }
dialog::backdrop { background: rgba(10, 14, 20, .5); }
.modal {
  border: 1px solid var(--border); border-radius: 14px; padding: 1.25rem; width: min(28rem, calc(100vw - 2rem));
  background: var(--surface); box-shadow: var(--shadow);
}
.modal h2 { margin: 0 0 .75rem; font-size: 1.15rem; }
.modal label { display: block; font-size: .9rem; color: var(--muted); margin-bottom: .3rem; }
.modal input[type="text"] { width: 100%; min-height: 2.6rem; padding: .45rem .7rem; border: 1px solid var(--border); border-radius: 8px; background: var(--bg); }
.modal p { margin: 0 0 .5rem; overflow-wrap: anywhere; }
.field-error { color: var(--danger); font-size: .88rem; margin-top: .45rem !important; }
.dialog-buttons { display: flex; justify-content: flex-end; gap: .5rem; margin-top: 1.1rem; flex-wrap: wrap; }
.picker { margin-top: .75rem; }
.picker-where { font-size: .85rem; color: var(--muted); }
.picker-list { list-style: none; margin: 0; padding: .25rem; max-height: 14rem; overflow-y: auto; border: 1px solid var(--border); border-radius: 8px; background: var(--bg); }
.picker-list button { display: flex; align-items: center; gap: .5rem; width: 100%; text-align: left; padding: .45rem .5rem; border: 0; background: none; border-radius: 6px; cursor: pointer; }
.picker-list button:hover { background: var(--surface-2); }
.picker-list button:disabled { opacity: .45; cursor: default; }
.picker-list .picker-empty { padding: .45rem .5rem; color: var(--muted); font-size: .9rem; }
.picker-list svg { color: var(--accent); }

/* preview */
.preview {
  width: 100vw; height: 100vh; height: 100dvh; max-width: 100vw; max-height: 100vh; max-height: 100dvh; margin: 0; padding: 0; border: 0;
  background: #0c0e12; color: #eef1f5;
}
.preview[open] { display: flex; flex-direction: column; }
.preview::backdrop { background: rgba(0, 0, 0, .7); }
.preview-head { display: flex; align-items: center; gap: .25rem; padding: .5rem .75rem; padding-top: max(.5rem, env(safe-area-inset-top)); background: rgba(0,0,0,.35); }
.preview-heading { flex: 1; min-width: 0; }
.preview-head h2 { margin: 0; font-size: 1rem; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
#preview-meta { font-size: .8rem; color: #aab3c0; }
.preview .icon-button { color: #cfd6df; }
.preview .icon-button:hover { background: rgba(255,255,255,.12); color: #fff; }
.preview-body { flex: 1; min-height: 0; display: flex; align-items: center; justify-content: center; padding: .75rem; overflow: auto; }
.preview-body img { max-width: 100%; max-height: 100%; object-fit: contain; cursor: zoom-in; background: repeating-conic-gradient(#2a2f37 0 25%, #1f232a 0 50%) 50% / 20px 20px; }
.preview-body.zoomed { align-items: flex-start; justify-content: flex-start; }
.preview-body.zoomed img { max-width: none; max-height: none; cursor: zoom-out; }
.preview-body video { max-width: 100%; max-height: 100%; background: #000; }
.preview-body audio { width: min(36rem, 100%); }
.preview-body iframe { width: 100%; height: 100%; border: 0; background: #fff; border-radius: 4px; }
.preview-body pre {
  align-self: stretch; width: 100%; max-width: 72rem; margin: 0 auto; padding: 1rem; overflow: auto;
  background: #1a1e24; color: #e7eaee; border-radius: 8px; font: 13px/1.5 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
  white-space: pre-wrap; overflow-wrap: anywhere; tab-size: 4;
}
.preview-text { display: flex; flex-direction: column; width: 100%; height: 100%; gap: .5rem; }
.preview-text pre { flex: 1 1 auto; min-height: 0; }
.modal h2:focus { outline: none; }
.preview-note { text-align: center; color: #aab3c0; font-size: .85rem; margin: 0; }
.preview-info { text-align: center; display: flex; flex-direction: column; align-items: center; gap: .6rem; }
.preview-info svg { width: 4rem; height: 4rem; stroke-width: 1.2; color: #aab3c0; }
.preview-info p { margin: 0; color: #aab3c0; }
.preview-nav {
  position: absolute; top: 50%; transform: translateY(-50%); width: 2.75rem; height: 4rem; border: 0; border-radius: 8px;
  background: rgba(0,0,0,.35); color: #fff; cursor: pointer; display: flex; align-items: center; justify-content: center;
}
.preview-nav:hover { background: rgba(0,0,0,.6); }
.preview-nav.prev { left: .5rem; }
.preview-nav.next { right: .5rem; }
.preview-nav svg { width: 1.75rem; height: 1.75rem; }
.preview-body.has-media ~ .preview-nav { top: auto; bottom: 1rem; transform: none; }

.noscript { padding: 2rem; text-align: center; }

/* phones and narrow windows */
@media (max-width: 720px) {
  body { font-size: 15px; }
  .topbar { padding: .6rem .75rem; padding-top: max(.6rem, env(safe-area-inset-top)); }
  .brand { flex: 1 1 auto; }
  .topbar-actions { flex-wrap: nowrap; gap: .4rem; }
  .topbar-actions .button { padding: .4rem .6rem; }
  .topbar-actions .button:not(.primary) .label { display: none; }
  #breadcrumb { padding: .5rem .75rem 0; }
  .toolbar { padding: .5rem .75rem; gap: .5rem; flex-wrap: nowrap; }
  .search { flex: 1 1 auto; max-width: none; }
  .toolbar #download-zip { margin-left: 0; padding: .4rem .65rem; }
  .toolbar #download-zip .label { display: none; }
  main { padding: 0 .5rem 2rem; }
  .selection-bar { margin: 0 .5rem .5rem; }
  .selection-actions .label { display: none; }
  .list-header { grid-template-columns: 2.25rem auto auto auto 1fr; }
  .list-header .col-name { grid-column: auto; }
  .list-header .col-size { justify-self: start; }
  .file-list > li {
    grid-template-columns: 2rem 2.5rem minmax(0, 1fr) auto;
    grid-template-areas: "check thumb name name" "check thumb meta actions";
    row-gap: 0; padding: .4rem .35rem;
  }
  .file-list .check { grid-area: check; }
  body.read-only .file-list > li { grid-template-columns: 0 2.5rem minmax(0, 1fr) auto; }
  body.read-only .list-header { grid-template-columns: 0 auto auto auto 1fr; }
  .file-list .thumb { grid-area: thumb; }
  .file-list .name-cell { grid-area: name; }
  .file-list .open { padding: .1rem 0; }
  .file-list .meta { grid-area: meta; display: flex; flex-wrap: wrap; gap: 0 .35rem; min-width: 0; align-self: center; font-size: .8rem; }
  .file-list .size { text-align: left; font-size: inherit; }
  .file-list .size:not(:empty) + .date::before { content: "·"; margin-right: .35rem; }
  .file-list .date { font-size: inherit; }
  .file-list .actions { grid-area: actions; }
  .file-list .actions .icon-button { width: 2.25rem; height: 2.25rem; }
  /* On a phone a file downloads from its preview, a folder from its own page. */
  .file-list .actions .download { display: none; }
  .upload-panel { right: .5rem; left: .5rem; bottom: .5rem; width: auto; max-height: 45vh; bottom: max(.5rem, env(safe-area-inset-bottom)); }
  .messages { top: .5rem; bottom: auto; left: .5rem; width: calc(100vw - 1rem); flex-direction: column-reverse; }
  body.offline .messages { top: 3rem; }
  .preview-nav { top: auto; bottom: 1rem; transform: none; width: 3rem; height: 3rem; }
  .preview-body { padding: .25rem .25rem 4.5rem; }
}
@media (max-width: 380px) {
  .topbar-actions .button svg { display: none; }
}
@media (hover: none) {
  .file-list > li:not(.selected):hover { background: transparent; }
}
@media (prefers-reduced-motion: reduce) {
  *, *::before, *::after { animation-duration: .01ms !important; animation-iteration-count: 1 !important; transition: none !important; }
}
"""#
}
