extension WebAssets {
    /// The web page served at `/`: it loads `/app.css` and `/app.js`.
    static let html = #"""
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1, viewport-fit=cover">
<meta name="color-scheme" content="light dark">
<meta name="referrer" content="same-origin">
<link rel="icon" href="data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 24 24' fill='none' stroke='%232563eb' stroke-width='2.2' stroke-linecap='round' stroke-linejoin='round'%3E%3Cpath d='M4 12v7a2 2 0 0 0 2 2h12a2 2 0 0 0 2-2v-7M16 6l-4-4-4 4M12 2v13'/%3E%3C/svg%3E">
<title>fileshare</title>
<link rel="stylesheet" href="/app.css">
<script src="/app.js" defer></script>
</head>
<body>
<a class="skip-link" href="#file-list">Skip to the file list</a>
<div id="connection" class="banner" role="status" hidden>
  <span class="spinner" aria-hidden="true"></span>
  <span id="connection-text">Connection lost, reconnecting…</span>
</div>

<header class="topbar">
  <div class="brand">
    <span class="brand-icon" data-icon="share" aria-hidden="true"></span>
    <h1 id="share-name">fileshare</h1>
    <span id="readonly-badge" class="badge" hidden>Read-only</span>
  </div>
  <div class="topbar-actions write-action">
    <button type="button" id="upload-button" class="button primary">
      <span data-icon="upload" aria-hidden="true"></span><span class="label">Upload</span>
    </button>
    <input type="file" id="upload-input" class="visually-hidden" multiple tabindex="-1" aria-label="Files to upload">
    <button type="button" id="upload-folder-button" class="button">
      <span data-icon="upload-folder" aria-hidden="true"></span><span class="label">Upload folder</span>
    </button>
    <input type="file" id="upload-folder-input" class="visually-hidden" multiple webkitdirectory tabindex="-1" aria-label="Folder to upload">
    <button type="button" id="new-folder" class="button">
      <span data-icon="new-folder" aria-hidden="true"></span><span class="label">New folder</span>
    </button>
  </div>
</header>

<nav id="breadcrumb" aria-label="Folder path"><ol id="breadcrumb-list"></ol></nav>

<div class="toolbar">
  <div class="search">
    <span data-icon="search" aria-hidden="true"></span>
    <label for="search" class="visually-hidden">Filter this folder by name</label>
    <input type="search" id="search" placeholder="Filter by name" autocomplete="off" spellcheck="false" enterkeyhint="search">
  </div>
  <a id="download-zip" class="button" href="/api/zip?path=" download>
    <span data-icon="zip" aria-hidden="true"></span><span class="label">Download folder (ZIP)</span>
  </a>
</div>

<div id="selection-bar" class="selection-bar" hidden>
  <span id="selection-count" aria-live="polite"></span>
  <span class="selection-actions">
    <button type="button" id="selection-move" class="button write-action"><span data-icon="move" aria-hidden="true"></span><span class="label">Move</span></button>
    <button type="button" id="selection-delete" class="button danger write-action"><span data-icon="delete" aria-hidden="true"></span><span class="label">Delete</span></button>
    <button type="button" id="selection-clear" class="button"><span data-icon="close" aria-hidden="true"></span><span class="label">Clear selection</span></button>
  </span>
</div>

<main id="main">
  <h2 id="folder-title" class="visually-hidden" tabindex="-1">Files</h2>
  <div id="list-header" class="list-header">
    <span class="col-check">
      <input type="checkbox" id="select-all" aria-label="Select all items shown">
    </span>
    <button type="button" class="sort col-name" id="sort-name" data-sort="name">Name<span class="sort-arrow" aria-hidden="true"></span><span class="visually-hidden sort-state"></span></button>
    <button type="button" class="sort col-size" id="sort-size" data-sort="size">Size<span class="sort-arrow" aria-hidden="true"></span><span class="visually-hidden sort-state"></span></button>
    <button type="button" class="sort col-date" id="sort-date" data-sort="date">Modified<span class="sort-arrow" aria-hidden="true"></span><span class="visually-hidden sort-state"></span></button>
  </div>
  <ul id="file-list" class="file-list" aria-labelledby="folder-title" aria-busy="true"></ul>
  <div id="empty" class="empty" hidden></div>
  <p id="status" class="status" aria-live="polite"></p>
</main>

<section id="upload-panel" class="upload-panel" aria-labelledby="uploads-title" hidden>
  <div class="upload-panel-head">
    <h2 id="uploads-title">Uploads</h2>
    <span id="uploads-summary" aria-live="polite"></span>
    <button type="button" id="uploads-clear" class="button small">Clear finished</button>
    <button type="button" id="uploads-toggle" class="icon-button" aria-expanded="true" aria-controls="uploads" aria-label="Collapse the upload list"><span data-icon="chevron-down" aria-hidden="true"></span></button>
  </div>
  <ul id="uploads" class="uploads"></ul>
</section>

<div id="messages" class="messages" aria-live="polite"></div>

<div id="drop-overlay" class="drop-overlay" hidden>
  <div class="drop-box">
    <span data-icon="upload" aria-hidden="true"></span>
    <p id="drop-text">Drop files or folders to upload</p>
  </div>
</div>

<dialog id="dialog" class="modal" aria-labelledby="dialog-title">
  <form id="dialog-form" method="dialog" novalidate>
    <h2 id="dialog-title" tabindex="-1">Name</h2>
    <label id="dialog-label" for="dialog-input">Name</label>
    <input id="dialog-input" type="text" autocomplete="off" autocapitalize="off" spellcheck="false">
    <p id="dialog-error" class="field-error" role="alert" hidden></p>
    <div id="dialog-picker" class="picker" hidden>
      <p class="picker-where">Folders in <strong id="picker-where"></strong></p>
      <ul id="picker-list" class="picker-list"></ul>
    </div>
    <div class="dialog-buttons">
      <button type="button" id="dialog-cancel" class="button">Cancel</button>
      <button type="submit" id="dialog-ok" class="button primary">OK</button>
    </div>
  </form>
</dialog>

<dialog id="confirm" class="modal" aria-labelledby="confirm-title" aria-describedby="confirm-message">
  <form id="confirm-form" method="dialog">
    <h2 id="confirm-title">Are you sure?</h2>
    <p id="confirm-message"></p>
    <div class="dialog-buttons">
      <button type="button" id="confirm-cancel" class="button">Cancel</button>
      <button type="button" id="confirm-extra" class="button" hidden>Other</button>
      <button type="submit" id="confirm-ok" class="button primary">OK</button>
    </div>
  </form>
</dialog>

<dialog id="preview" class="preview" aria-labelledby="preview-title">
  <div class="preview-head">
    <div class="preview-heading">
      <h2 id="preview-title"></h2>
      <span id="preview-meta"></span>
    </div>
    <a id="preview-open" class="icon-button" href="/" target="_blank" rel="noopener" title="Open in a new tab" aria-label="Open in a new tab"><span data-icon="external" aria-hidden="true"></span></a>
    <a id="preview-download" class="icon-button" href="/" download title="Download" aria-label="Download"><span data-icon="download" aria-hidden="true"></span></a>
    <button type="button" id="preview-close" class="icon-button" title="Close (Esc)" aria-label="Close the preview"><span data-icon="close" aria-hidden="true"></span></button>
  </div>
  <div id="preview-body" class="preview-body"></div>
  <button type="button" id="preview-prev" class="preview-nav prev" title="Previous (←)" aria-label="Previous file"><span data-icon="chevron-left" aria-hidden="true"></span></button>
  <button type="button" id="preview-next" class="preview-nav next" title="Next (→)" aria-label="Next file"><span data-icon="chevron-right" aria-hidden="true"></span></button>
</dialog>

<noscript><p class="noscript">This page needs JavaScript. The files can also be reached over WebDAV at <code>/dav/</code>.</p></noscript>
</body>
</html>
"""#
}
