// fileshare web page: browse, upload, preview and manage the shared folder.
// Plain JavaScript, no framework, nothing fetched from outside this server.
// On a read link's page (/s/TOKEN, link.html) the same list, gallery and
// viewer show the link's folder, read-only, through the link's addresses.
(function () {
  'use strict';

  // Absolute URL of a path on this server, without credentials: on a page opened as
  // http://user:password@host/ (as browser tests like to do), fetch() refuses the
  // relative URLs, which would inherit them; the browser still sends the ones it cached.
  const serverURL = (path) => location.origin + path;

  // ---------------------------------------------------------------- helpers

  const $ = (selector, root) => (root || document).querySelector(selector);
  const MiB = 1024 * 1024;
  const TEXT_PREVIEW_BYTES = MiB;
  const MAX_PARALLEL_UPLOADS = 3;
  const MAX_RETRIES = 8;
  const STALL_MS = 60000;

  const state = {
    info: { name: '', readOnly: false, maxUploadBytes: 0, resumableChunkBytes: 8 * MiB },
    path: null,          // folder on screen ('' = the shared folder)
    items: [],           // its listing
    shownKeys: [],       // the keys of the items the list shows, in order (drawn or still to draw)
    loaded: false,
    sort: { key: 'name', dir: 1 },
    filter: '',
    selected: new Set(), // keys (item id, or name) of selected items
    listSeq: 0,
    scrollByPath: new Map(),
    focusAfterLoad: null,
    flashAfterLoad: null,
    climbing: null,    // folder being reached after the one on screen disappeared
  };

  const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });

  // Where the page lists and reads: the share's API, or, on a read link's page (the body's data-link,
  // data-view, data-name, data-thumbnails), the link's own addresses, never the API's. There a file
  // itself is shown only where looking is free (data-view: a link without a download limit); on a
  // link that counts its downloads, file(path) is null and the viewer shows the thumbnail instead.
  const link = document.body.dataset.link ? document.body.dataset : null;
  const under = (verb, path) => link.link + '/' + verb + (path ? '/' + encodePath(path) : '');
  const source = link ? {
    link: true,
    list: (path) => under('list', path),
    file: (path) => (link.view ? under('view', path) : null),
    download: (path) => under('download', path) + '?download=1',
    thumbnail: (path) => under('thumbnail', path),
    zip: (path) => under('zip', path),
  } : {
    link: false,
    list: (path) => '/api/list?path=' + encodeURIComponent(path),
    file: (path) => '/api/files/' + encodePath(path),
    download: (path) => '/api/files/' + encodePath(path) + '?download=1',
    thumbnail: (path) => '/api/thumbnail/' + encodePath(path),
    zip: (path) => '/api/zip?path=' + encodeURIComponent(path),
  };

  // What gallery.js and viewer.js use of this page, and the hooks they set:
  // listWillRender() and listRendered(items) around drawing the list, preview(item, body) to show
  // a file (true when shown), focusItem(item) when the preview closes.
  const hooks = {};
  window.fileshare = {
    hooks, state, visibleItems, openItem, fileURL, openURL, thumbnailURL, encodePath, joinPath, parentOf, extension, fileType,
    iconFor, icon, el, formatSize, serverURL, collator, unauthorized,
    showText: (item, body) => loadTextPreview(item, fileURL(item.path || joinPath(state.path, item.name)), body),
  };

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    if (attrs) {
      for (const [key, value] of Object.entries(attrs)) {
        if (value === undefined || value === null || value === false) continue;
        if (key === 'class') node.className = value;
        else if (key === 'text') node.textContent = value;
        else if (key === 'dataset') Object.assign(node.dataset, value);
        else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
        else node.setAttribute(key, value === true ? '' : String(value));
      }
    }
    for (const child of children) {
      if (child === undefined || child === null || child === false) continue;
      node.append(child instanceof Node ? child : String(child));
    }
    return node;
  }

  const ICONS = {
    folder: 'M3 7a2 2 0 0 1 2-2h4l2 2h8a2 2 0 0 1 2 2v8a2 2 0 0 1-2 2H5a2 2 0 0 1-2-2z',
    file: 'M14 3H7a2 2 0 0 0-2 2v14a2 2 0 0 0 2 2h10a2 2 0 0 0 2-2V8z M14 3v5h5',
    text: 'M14 3H7a2 2 0 0 0-2 2v14a2 2 0 0 0 2 2h10a2 2 0 0 0 2-2V8z M14 3v5h5 M9 13h6 M9 17h6',
    pdf: 'M14 3H7a2 2 0 0 0-2 2v14a2 2 0 0 0 2 2h10a2 2 0 0 0 2-2V8z M14 3v5h5 M9 18v-5h1.5a1.5 1.5 0 0 1 0 3H9 M14 13v5 M14 13h2.5 M14 15.5h2',
    image: 'M5 3h14a2 2 0 0 1 2 2v14a2 2 0 0 1-2 2H5a2 2 0 0 1-2-2V5a2 2 0 0 1 2-2z M10 8.5a1.5 1.5 0 1 1-3 0a1.5 1.5 0 1 1 3 0z M21 15l-5-5L5 21',
    video: 'M5 4h14a2 2 0 0 1 2 2v12a2 2 0 0 1-2 2H5a2 2 0 0 1-2-2V6a2 2 0 0 1 2-2z M10 9l5 3l-5 3z',
    audio: 'M9 18V5l12-2v13 M9 18a3 3 0 1 1-6 0a3 3 0 1 1 6 0z M21 16a3 3 0 1 1-6 0a3 3 0 1 1 6 0z',
    archive: 'M14 3H7a2 2 0 0 0-2 2v14a2 2 0 0 0 2 2h10a2 2 0 0 0 2-2V8z M14 3v5h5 M10 5h2 M10 8h2 M10 11h2 M10 14h2v3h-2z',
    link: 'M10 13a5 5 0 0 0 7.54.54l3-3a5 5 0 0 0-7.07-7.07l-1.72 1.71 M14 11a5 5 0 0 0-7.54-.54l-3 3a5 5 0 0 0 7.07 7.07l1.71-1.71',
    symlink: 'M10 13a5 5 0 0 0 7.54.54l3-3a5 5 0 0 0-7.07-7.07l-1.72 1.71 M14 11a5 5 0 0 0-7.54-.54l-3 3a5 5 0 0 0 7.07 7.07l1.71-1.71',
    other: 'M12 3a9 9 0 1 0 0 18a9 9 0 1 0 0-18z M9.1 9a3 3 0 0 1 5.8 1c0 2-3 3-3 3 M12 17h.01',
    download: 'M21 15v4a2 2 0 0 1-2 2H5a2 2 0 0 1-2-2v-4 M7 10l5 5l5-5 M12 15V3',
    history: 'M3 12a9 9 0 1 0 3-6.7 M3 4v5h5 M12 7v5l3 2',
    trash: 'M4 7h16 M10 11v6 M14 11v6 M6 7l1 12a2 2 0 0 0 2 2h6a2 2 0 0 0 2-2l1-12 M9 7V4h6v3',
    upload: 'M21 15v4a2 2 0 0 1-2 2H5a2 2 0 0 1-2-2v-4 M17 8l-5-5l-5 5 M12 3v12',
    'upload-folder': 'M3 7a2 2 0 0 1 2-2h4l2 2h8a2 2 0 0 1 2 2v8a2 2 0 0 1-2 2H5a2 2 0 0 1-2-2z M12 16v-6 M9.5 12.5L12 10l2.5 2.5',
    'new-folder': 'M3 7a2 2 0 0 1 2-2h4l2 2h8a2 2 0 0 1 2 2v8a2 2 0 0 1-2 2H5a2 2 0 0 1-2-2z M12 10v6 M9 13h6',
    rename: 'M12 20h9 M16.5 3.5a2.12 2.12 0 0 1 3 3L7 19l-4 1l1-4z',
    move: 'M3 7a2 2 0 0 1 2-2h4l2 2h8a2 2 0 0 1 2 2v8a2 2 0 0 1-2 2H5a2 2 0 0 1-2-2z M9 13h6 M12.5 10.5L15 13l-2.5 2.5',
    delete: 'M3 6h18 M8 6V4a2 2 0 0 1 2-2h4a2 2 0 0 1 2 2v2 M19 6l-1 14a2 2 0 0 1-2 2H8a2 2 0 0 1-2-2L5 6 M10 11v6 M14 11v6',
    zip: 'M21 8v12a1 1 0 0 1-1 1H4a1 1 0 0 1-1-1V8 M1 3h22v5H1z M10 12h4',
    close: 'M18 6L6 18 M6 6l12 12',
    'chevron-left': 'M15 18l-6-6l6-6',
    'chevron-right': 'M9 18l6-6l-6-6',
    'chevron-down': 'M6 9l6 6l6-6',
    up: 'M12 19V5 M5 12l7-7l7 7',
    pause: 'M6 4h4v16H6z M14 4h4v16h-4z',
    resume: 'M1 4v6h6 M3.51 15a9 9 0 1 0 2.13-9.36L1 10',
    check: 'M20 6L9 17l-5-5',
    alert: 'M12 9v4 M12 17h.01 M10.29 3.86L1.82 18a2 2 0 0 0 1.71 3h16.94a2 2 0 0 0 1.71-3L13.71 3.86a2 2 0 0 0-3.42 0z',
    info: 'M12 3a9 9 0 1 0 0 18a9 9 0 1 0 0-18z M12 16v-4 M12 8h.01',
    search: 'M11 19a8 8 0 1 0 0-16a8 8 0 0 0 0 16z M21 21l-4.35-4.35',
    external: 'M18 13v6a2 2 0 0 1-2 2H5a2 2 0 0 1-2-2V8a2 2 0 0 1 2-2h6 M15 3h6v6 M10 14L21 3',
    home: 'M3 10l9-7l9 7v10a2 2 0 0 1-2 2H5a2 2 0 0 1-2-2z M9 22V12h6v10',
    share: 'M4 12v7a2 2 0 0 0 2 2h12a2 2 0 0 0 2-2v-7 M16 6l-4-4l-4 4 M12 2v13',
  };

  // Each icon is drawn once and cloned after: a folder of thousands of rows asks for five a row.
  const iconPrototypes = new Map();
  function icon(name) {
    if (!ICONS[name]) name = 'file';
    let prototype = iconPrototypes.get(name);
    if (!prototype) {
      prototype = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
      prototype.setAttribute('viewBox', '0 0 24 24');
      prototype.setAttribute('class', 'icon');
      prototype.setAttribute('aria-hidden', 'true');
      prototype.setAttribute('focusable', 'false');
      const path = document.createElementNS('http://www.w3.org/2000/svg', 'path');
      path.setAttribute('d', ICONS[name]);
      prototype.append(path);
      iconPrototypes.set(name, prototype);
    }
    return prototype.cloneNode(true);
  }

  function iconButton(iconName, label, className, onclick) {
    return el('button', { type: 'button', class: 'icon-button ' + className, title: label, 'aria-label': label, onclick }, icon(iconName));
  }

  // Paths are '/'-separated and relative to the shared folder ('' is the shared folder).
  function joinPath(dir, name) { return dir ? dir + '/' + name : name; }
  function parentOf(path) { const i = path.lastIndexOf('/'); return i < 0 ? '' : path.slice(0, i); }
  function baseName(path) { return path.slice(path.lastIndexOf('/') + 1); }
  function encodePath(path) { return path.split('/').map(encodeURIComponent).join('/'); }
  // The file's address to show it (null where showing it would spend a link's download), or to download it.
  function fileURL(path, download) { return download ? source.download(path) : source.file(path); }
  // What a link to the file opens: the file, or where looking is not free, its (counted) download.
  function openURL(path) { return fileURL(path) || fileURL(path, true); }
  function zipURL(path) { return source.zip(path); }
  function listURL(path) { return source.list(path); }
  function isInside(path, folder) { return folder === '' ? path !== '' : path === folder || path.startsWith(folder + '/'); }
  function displayFolder(path) { return path === '' ? (state.info.name || 'the shared folder') : baseName(path); }

  // "a/ b//c/" -> "a/b/c"; throws on ".." so nothing escapes the share.
  function normalizeFolder(text) {
    const parts = [];
    for (const raw of String(text).split('/')) {
      const part = raw.trim();
      if (part === '' || part === '.') continue;
      if (part === '..') throw new Error('“..” is not allowed in a path.');
      parts.push(part);
    }
    return parts.join('/');
  }

  function pathFromHash() {
    const hash = location.hash.replace(/^#\/?/, '');
    if (!hash) return '';
    try {
      return normalizeFolder(hash.split('/').map(decodeURIComponent).join('/'));
    } catch (e) {
      return '';
    }
  }
  function hashFor(path) { return '#/' + (path ? encodePath(path) : ''); }

  function extension(name) {
    const i = name.lastIndexOf('.');
    return i > 0 ? name.slice(i + 1).toLowerCase() : '';
  }

  const TYPES = {
    image: ['jpg', 'jpeg', 'png', 'gif', 'webp', 'avif', 'bmp', 'svg', 'ico', 'apng', 'jfif'],
    video: ['mp4', 'm4v', 'webm', 'ogv', 'mov'],
    audio: ['mp3', 'm4a', 'aac', 'wav', 'ogg', 'oga', 'opus', 'flac', 'weba'],
    pdf: ['pdf'],
    text: ['txt', 'text', 'md', 'markdown', 'rst', 'csv', 'tsv', 'log', 'json', 'jsonl', 'ndjson', 'xml', 'yaml', 'yml',
      'toml', 'ini', 'cfg', 'conf', 'env', 'properties', 'sh', 'bash', 'zsh', 'fish', 'ps1', 'bat', 'py', 'rb', 'pl', 'php',
      'js', 'mjs', 'cjs', 'ts', 'tsx', 'jsx', 'css', 'scss', 'less', 'html', 'htm', 'svelte', 'vue', 'swift', 'c', 'h',
      'cc', 'cpp', 'hpp', 'm', 'mm', 'rs', 'go', 'java', 'kt', 'kts', 'scala', 'cs', 'fs', 'lua', 'r', 'sql', 'graphql',
      'proto', 'diff', 'patch', 'srt', 'vtt', 'tex', 'bib', 'gradle', 'cmake', 'mk', 'nfo', 'asc', 'pem', 'gitignore',
      'dockerignore', 'editorconfig', 'lock'],
    archive: ['zip', 'tar', 'gz', 'tgz', 'bz2', 'xz', '7z', 'rar', 'zst', 'dmg', 'iso'],
  };
  const TEXT_NAMES = ['readme', 'license', 'licence', 'makefile', 'dockerfile', 'changelog', 'authors', 'copying', 'notice', 'todo', 'procfile', 'gemfile', 'rakefile', 'vagrantfile'];
  const TYPE_BY_EXT = new Map();
  for (const [type, exts] of Object.entries(TYPES)) for (const ext of exts) TYPE_BY_EXT.set(ext, type);

  // Kind of preview for an item: image, video, audio, pdf, text, archive or null.
  function fileType(item) {
    if (item.kind === 'directory' || item.kind === 'other') return null;
    const ext = extension(item.name);
    if (TYPE_BY_EXT.has(ext)) return TYPE_BY_EXT.get(ext);
    if (!ext && TEXT_NAMES.includes(item.name.toLowerCase())) return 'text';
    return null;
  }
  // The kind of thumbnail the server names in /api/info's thumbnailKinds, by extension.
  const THUMBNAIL_KIND = new Map([
    ['jpg', 'jpeg'], ['jpeg', 'jpeg'], ['jfif', 'jpeg'], ['png', 'png'], ['webp', 'webp'], ['gif', 'gif'],
    ['heic', 'heif'], ['heif', 'heif'], ['cbz', 'cbz'], ['epub', 'epub'], ['pdf', 'pdf'],
    ['mp4', 'video'], ['m4v', 'video'], ['webm', 'video'], ['mov', 'video'], ['mkv', 'video'], ['avi', 'video'],
    ['mp3', 'audio'], ['m4a', 'audio'], ['flac', 'audio'], ['ogg', 'audio'], ['opus', 'audio'],
  ]);

  // Whether the list asks the server for a thumbnail of this item: only kinds
  // this server makes thumbnails of (a refusal costs a request per row).
  function wantsThumbnail(item) {
    if (item.kind !== 'file') return false;
    const kinds = state.info.thumbnailKinds;
    if (!Array.isArray(kinds)) return fileType(item) === 'image';
    return kinds.includes(THUMBNAIL_KIND.get(extension(item.name)));
  }

  // The thumbnail's address, by version (a new version is not the cached image), or null.
  function thumbnailURL(item) {
    if (!wantsThumbnail(item) || item.writing) return null;
    const version = encodeURIComponent(item.modified || '') + '-' + (item.size || 0);
    return source.thumbnail(item.path || joinPath(state.path, item.name)) + '?v=' + version;
  }

  function iconFor(item) {
    if (item.kind === 'directory') return 'folder';
    if (item.kind === 'symlink') return 'symlink';
    if (item.kind === 'other') return 'other';
    return fileType(item) || 'file';
  }

  function formatSize(bytes) {
    if (typeof bytes !== 'number' || !isFinite(bytes)) return '';
    if (bytes < 1000) return bytes + (bytes === 1 ? ' byte' : ' bytes');
    const units = ['kB', 'MB', 'GB', 'TB', 'PB'];
    let value = bytes;
    let unit = -1;
    do { value /= 1000; unit++; } while (value >= 999.5 && unit < units.length - 1);
    return (value < 10 ? value.toFixed(1) : Math.round(value)) + ' ' + units[unit];
  }
  function formatCount(n, one, many) { return n + ' ' + (n === 1 ? one : many); }
  function formatDuration(seconds) {
    if (!isFinite(seconds) || seconds < 0) return '';
    seconds = Math.ceil(seconds);
    if (seconds < 60) return seconds + ' s';
    const m = Math.floor(seconds / 60);
    if (m < 60) return m + ' min ' + String(seconds % 60).padStart(2, '0') + ' s';
    const h = Math.floor(m / 60);
    return h + ' h ' + String(m % 60).padStart(2, '0') + ' min';
  }
  const timeFormat = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });
  const dayFormat = new Intl.DateTimeFormat(undefined, { day: 'numeric', month: 'short' });
  const fullDayFormat = new Intl.DateTimeFormat(undefined, { day: 'numeric', month: 'short', year: 'numeric' });
  const longFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'full', timeStyle: 'medium' });
  const mediumFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
  const narrow = window.matchMedia('(max-width: 720px)');
  // Short on a phone ("10:42", "Oct 18", "Oct 18, 2024"); the full date is in the tooltip.
  function formatDate(date) {
    if (!date || isNaN(date)) return '';
    const now = new Date();
    const compact = narrow.matches;
    if (date.toDateString() === now.toDateString()) return compact ? timeFormat.format(date) : 'Today ' + timeFormat.format(date);
    const yesterday = new Date(now.getFullYear(), now.getMonth(), now.getDate() - 1);
    if (date.toDateString() === yesterday.toDateString()) return compact ? 'Yesterday' : 'Yesterday ' + timeFormat.format(date);
    if (date.getFullYear() === now.getFullYear()) return compact ? dayFormat.format(date) : dayFormat.format(date) + ', ' + timeFormat.format(date);
    return fullDayFormat.format(date);
  }

  function fold(text) {
    return text.normalize('NFD').replace(/[\u0300-\u036f]/g, '').toLowerCase();
  }

  function plural(n, word) { return n + ' ' + word + (n === 1 ? '' : 's'); }

  // ---------------------------------------------------------------- API

  class ApiError extends Error {
    constructor(status, message) {
      super(message);
      this.status = status;
    }
  }

  const STATUS_TEXT = {
    0: 'The connection to the server was lost.',
    400: 'The server refused this request.',
    401: 'You are not signed in.',
    403: 'You may not change this.',
    404: 'It is not there any more.',
    409: 'Something with that name already exists.',
    412: 'It was changed by someone else meanwhile.',
    413: 'The file is larger than the server accepts.',
    415: 'The server does not accept this type of file.',
    423: 'It is locked.',
    500: 'The server ran into an error.',
    503: 'The server is busy; try again shortly.',
    507: 'The server’s disk is full.',
  };

  function messageFor(status, body) {
    // A name that does not fit what the file holds: told as what to do, not as the server's settings.
    if (status === 415 && body && typeof body.rename === 'string') {
      return 'Its name does not fit what it holds. Rename it “' + body.rename + '” and upload it again.';
    }
    if (body && typeof body.error === 'string' && body.error) return body.error;
    return STATUS_TEXT[status] || ('The server answered ' + status + '.');
  }

  async function api(method, url, options) {
    options = options || {};
    const init = { method, credentials: 'same-origin', headers: Object.assign({ Accept: 'application/json' }, options.headers || {}) };
    if (options.json !== undefined) {
      init.body = JSON.stringify(options.json);
      init.headers['Content-Type'] = 'application/json';
    }
    if (options.signal) init.signal = options.signal;
    let response;
    try {
      response = await fetch(serverURL(url), init);
    } catch (e) {
      if (e.name === 'AbortError') throw e;
      throw new ApiError(0, STATUS_TEXT[0]);
    }
    let body = null;
    const type = response.headers.get('Content-Type') || '';
    if (type.includes('json')) {
      try { body = await response.json(); } catch (e) { body = null; }
    }
    if (!response.ok) {
      // A link that asks for its password again (its visit ended) or has ended: its own page says so.
      if (source.link && (response.status === 401 || response.status === 410)) location.reload();
      // The session ended and the person asked for something: to the sign-in
      // form, and back here after it (an ended session noticed by the event
      // stream alone shows a banner instead: sessionEnded).
      if (response.status === 401 && body && body.signIn) signInAgain(body.signIn);
      if (response.status === 403 && !state.info.readOnly) refreshInfo();
      throw new ApiError(response.status, messageFor(response.status, body));
    }
    return body;
  }

  // Signed in with a users file, and the session ended (signed out in another tab, timed out):
  // to the sign-in form, which brings the person back here (this folder) once signed in.
  let signingIn = false;
  function signInAgain(form) {
    if (signingIn) return;
    signingIn = true;
    const here = location.pathname + location.search + location.hash;
    location.assign(serverURL(form + '?next=' + encodeURIComponent(here)));
  }

  // Whether `response` (of any request of the page) says the session ended; then to the sign-in form.
  async function unauthorized(response) {
    if (!response || response.status !== 401) return false;
    let body = null;
    try { body = await response.clone().json(); } catch (e) { body = null; }
    if (!body || !body.signIn) return false;
    signInAgain(body.signIn);
    return true;
  }

  // Asks whether the session still holds (after what failed without saying why, as an image does).
  async function checkSession() {
    if (source.link) return;
    try { await unauthorized(await fetch(serverURL('/api/info'), { credentials: 'same-origin', cache: 'no-store' })); } catch (e) { /* offline */ }
  }

  // ---------------------------------------------------------------- messages

  // `actions`: buttons in the toast, [{ label, class, run }] (Undo, Open the Trash); one closes it.
  function toast(text, kind, timeout, actions) {
    kind = kind || 'error';
    const box = $('#messages');
    for (const existing of box.children) {
      if (existing.dataset.text === text) existing.remove();
    }
    const node = el('div', { class: 'toast ' + kind, role: kind === 'error' ? 'alert' : 'status', dataset: { text } },
      el('span', { class: 'toast-icon' }, icon(kind === 'error' ? 'alert' : kind === 'success' ? 'check' : 'info')),
      el('span', { class: 'toast-text', text }));
    const close = () => node.remove();
    for (const action of actions || []) {
      node.append(el('button', { type: 'button', class: 'button small ' + action.class, onclick: () => { close(); action.run(); } }, action.label));
    }
    node.append(iconButton('close', 'Dismiss', 'toast-close', close));
    box.append(node);
    while (box.children.length > 4) box.firstElementChild.remove();
    let timer = setTimeout(close, timeout || (kind === 'error' ? 10000 : kind === 'success' ? 3000 : 5000));
    node.addEventListener('mouseenter', () => clearTimeout(timer));
    node.addEventListener('mouseleave', () => { timer = setTimeout(close, 4000); });
    return node;
  }

  function report(error, what) {
    if (error && error.name === 'AbortError') return;
    const text = error instanceof ApiError || (error && error.message) ? error.message : String(error);
    toast(what ? what + ': ' + text : text, 'error');
  }

  // ---------------------------------------------------------------- dialogs

  let dialogState = null;

  // A prompt without window.prompt(): resolves with the text, or null when cancelled.
  function promptDialog(options) {
    const dialog = $('#dialog');
    const input = $('#dialog-input');
    $('#dialog-title').textContent = options.title;
    $('#dialog-label').textContent = options.label || 'Name';
    $('#dialog-ok').textContent = options.ok || 'OK';
    $('#dialog-error').hidden = true;
    input.value = options.value || '';
    $('#dialog-picker').hidden = !options.picker;
    return new Promise((resolve) => {
      dialogState = { resolve, validate: options.validate, picker: options.picker };
      openModal(dialog);
      if (options.picker) {
        // Choosing from the list is the usual way: don't pop up a phone's keyboard over it.
        pickerLoad(input.value);
        $('#dialog-title').focus();
        return;
      }
      input.focus();
      if (options.selectEnd !== undefined) input.setSelectionRange(0, options.selectEnd);
      else input.select();
    });
  }

  function finishPrompt(value) {
    const dialog = $('#dialog');
    const current = dialogState;
    dialogState = null;
    if (dialog.open) dialog.close();
    if (current) current.resolve(value);
  }

  async function submitPrompt() {
    if (!dialogState) return;
    const value = $('#dialog-input').value;
    if (dialogState.validate) {
      const problem = await dialogState.validate(value);
      if (problem) {
        const error = $('#dialog-error');
        error.textContent = problem;
        error.hidden = false;
        $('#dialog-input').focus();
        return;
      }
    }
    finishPrompt(value);
  }

  let confirmState = null;

  // Resolves 'ok', 'extra' (the optional third button) or null.
  function confirmDialog(options) {
    const dialog = $('#confirm');
    $('#confirm-title').textContent = options.title;
    $('#confirm-message').textContent = options.message || '';
    const ok = $('#confirm-ok');
    ok.textContent = options.ok || 'OK';
    ok.classList.toggle('danger', !!options.danger);
    $('#confirm-cancel').textContent = options.cancel || 'Cancel';
    const extra = $('#confirm-extra');
    extra.hidden = !options.extra;
    extra.textContent = options.extra || '';
    return new Promise((resolve) => {
      confirmState = resolve;
      openModal(dialog);
      (options.danger ? $('#confirm-cancel') : ok).focus();
    });
  }

  function finishConfirm(value) {
    const dialog = $('#confirm');
    const resolve = confirmState;
    confirmState = null;
    if (dialog.open) dialog.close();
    if (resolve) resolve(value);
  }

  function openModal(dialog) {
    dialog.returnFocus = document.activeElement;
    if (typeof dialog.showModal === 'function') dialog.showModal();
    else dialog.setAttribute('open', '');
  }

  function setupDialogs() {
    const dialog = $('#dialog');
    $('#dialog-form').addEventListener('submit', (e) => { e.preventDefault(); submitPrompt(); });
    $('#dialog-cancel').addEventListener('click', () => finishPrompt(null));
    dialog.addEventListener('close', () => {
      if (dialogState) finishPrompt(null);
      restoreFocus(dialog);
    });
    $('#dialog-input').addEventListener('input', () => {
      $('#dialog-error').hidden = true;
      if (dialogState && dialogState.picker) pickerSchedule();
    });

    const confirm = $('#confirm');
    $('#confirm-form').addEventListener('submit', (e) => { e.preventDefault(); finishConfirm('ok'); });
    $('#confirm-cancel').addEventListener('click', () => finishConfirm(null));
    $('#confirm-extra').addEventListener('click', () => finishConfirm('extra'));
    confirm.addEventListener('close', () => {
      if (confirmState) finishConfirm(null);
      restoreFocus(confirm);
    });
  }

  function restoreFocus(dialog) {
    const target = dialog.returnFocus;
    dialog.returnFocus = null;
    if (target && target.isConnected && document.activeElement === document.body) target.focus();
  }

  // The folder picker inside the prompt dialog (for "Move").
  let pickerTimer = 0;
  let pickerSeq = 0;
  function pickerSchedule() {
    clearTimeout(pickerTimer);
    pickerTimer = setTimeout(() => pickerLoad($('#dialog-input').value), 250);
  }

  async function pickerLoad(text) {
    let folder;
    try { folder = normalizeFolder(text); } catch (e) { return; }
    const seq = ++pickerSeq;
    const list = $('#picker-list');
    $('#picker-where').textContent = folder === '' ? (state.info.name || 'the shared folder') : '/' + folder;
    let items;
    try {
      items = (await api('GET', listURL(folder))).items || [];
    } catch (e) {
      if (seq !== pickerSeq) return;
      list.replaceChildren(el('li', { class: 'picker-empty', text: e.status === 404 ? 'This folder does not exist yet.' : e.message }));
      return;
    }
    if (seq !== pickerSeq || !dialogState) return;
    const moving = dialogState.picker.moving || [];
    const rows = [];
    const choose = (path) => {
      $('#dialog-input').value = path === '' ? '/' : path;
      $('#dialog-error').hidden = true;
      pickerLoad(path);
    };
    if (folder !== '') {
      rows.push(el('li', null, el('button', { type: 'button', onclick: () => choose(parentOf(folder)) }, icon('up'), 'Parent folder')));
    }
    const folders = items.filter((i) => i.kind === 'directory').sort((a, b) => collator.compare(a.name, b.name));
    for (const item of folders) {
      const path = item.path || joinPath(folder, item.name);
      const blocked = moving.some((m) => isInside(path, m));
      rows.push(el('li', null, el('button', { type: 'button', disabled: blocked, onclick: () => choose(path) }, icon('folder'), item.name)));
    }
    if (!folders.length) rows.push(el('li', { class: 'picker-empty', text: 'No folders inside.' }));
    list.replaceChildren(...rows);
  }

  // ---------------------------------------------------------------- server info

  async function refreshInfo() {
    if (source.link) {
      // A link's page is told what it shows by the page itself: its folder, read-only.
      state.info.name = link.name || '';
      state.info.thumbnailKinds = (link.thumbnails || '').split(' ').filter(Boolean);
      state.shareReadOnly = true;
      state.info.readOnly = true;
      applyInfo();
      return;
    }
    try {
      const info = await api('GET', '/api/info');
      if (info && typeof info === 'object') Object.assign(state.info, info);
      state.shareReadOnly = !!state.info.readOnly;
    } catch (e) {
      // An older server without /api/info: keep the defaults.
    }
    state.info.readOnly = !!state.shareReadOnly || !!state.folderReadOnly;
    if (!(state.info.resumableChunkBytes > 0)) state.info.resumableChunkBytes = 8 * MiB;
    applyInfo();
  }

  // Read-only for this user here: the share is, or the folder on screen is only theirs to read.
  function applyReadOnly() {
    const readOnly = !!state.shareReadOnly || !!state.folderReadOnly;
    if (readOnly === !!state.info.readOnly) return;
    state.info.readOnly = readOnly;
    applyInfo();
  }

  // Why nothing can be changed here, in a person's words, or null when something can.
  function readOnlyReason() {
    if (state.shareReadOnly) return { badge: 'Read-only', text: 'This share is read-only: nothing can be added or changed.' };
    if (state.folderAccess === 'read') {
      return { badge: 'View only', text: 'You can view “' + displayFolder(state.path || '') + '” but not change it: nothing can be added here.' };
    }
    if (state.folderAccess === 'none') return { badge: null, text: 'Nothing can be added here: open one of your folders first.' };
    return null;
  }

  function applyInfo() {
    const readOnly = !!state.info.readOnly;
    const wasReadOnly = document.body.classList.contains('read-only');
    document.body.classList.toggle('read-only', readOnly);
    // Only what is true: a folder that is not the user's (the top of a share with accounts) is a
    // way to their folders, not a read-only one; one they may only read is "View only".
    const reason = readOnly ? readOnlyReason() : null;
    const badge = $('#readonly-badge');
    // A link's page has no badge and no sign-out: it says what the link allows in its own words.
    if (badge) {
      badge.hidden = !(reason && reason.badge);
      badge.textContent = reason && reason.badge ? reason.badge : '';
      if (reason && reason.badge) badge.title = reason.text;
      else badge.removeAttribute('title');
    }
    $('#share-name').textContent = state.info.name || 'fileshare';
    if ($('#signed-in')) {
      $('#signed-in').hidden = !state.info.user;
      $('#signed-in-user').textContent = state.info.user || '';
    }
    if (readOnly !== wasReadOnly && state.loaded) {
      state.selected.clear();
      renderList(true);
    }
    renderBreadcrumb();
    updateTitle();
  }

  function updateTitle() {
    const share = state.info.name || 'fileshare';
    document.title = state.path ? baseName(state.path) + ' — ' + share : share;
  }

  // ---------------------------------------------------------------- navigation

  function navigate(path, replace) {
    const hash = hashFor(path);
    if (location.hash === hash || (hash === '#/' && location.hash === '')) {
      loadFolder(path);
      return;
    }
    if (replace) location.replace(hash);
    else location.hash = hash;
  }

  function onHashChange() {
    const path = pathFromHash();
    if (path === state.path) return;
    const previous = state.path;
    if (previous !== null) state.scrollByPath.set(previous, window.scrollY);
    // Going up: put the focus on the folder we came from.
    if (previous && isInside(previous, path) && path !== previous) {
      state.focusAfterLoad = previous.slice(path ? path.length + 1 : 0).split('/')[0];
    }
    loadFolder(path);
  }

  function renderBreadcrumb() {
    const list = $('#breadcrumb-list');
    const path = state.path || '';
    const crumbs = [{ name: state.info.name || 'Home', path: '' }];
    if (path) {
      const parts = path.split('/');
      parts.forEach((part, i) => crumbs.push({ name: part, path: parts.slice(0, i + 1).join('/') }));
    }
    list.replaceChildren(...crumbs.map((crumb, i) => {
      const last = i === crumbs.length - 1;
      const link = el('a', { href: hashFor(crumb.path), 'aria-current': last ? 'page' : null, dataset: { dropPath: crumb.path } },
        i === 0 ? icon('home') : null, crumb.name);
      return el('li', null, link);
    }));
    const nav = $('#breadcrumb');
    nav.scrollLeft = nav.scrollWidth;
  }

  // ---------------------------------------------------------------- listing

  let refreshTimer = 0;
  let refreshDue = 0;
  let loading = false;
  let refreshPending = false;

  // At most one refresh waits: a steady stream of events cannot postpone it forever.
  function scheduleRefresh(delay) {
    if (delay === undefined) delay = 100;
    const due = Date.now() + delay;
    if (refreshTimer && refreshDue <= due) return;
    clearTimeout(refreshTimer);
    refreshDue = due;
    refreshTimer = setTimeout(() => { refreshTimer = 0; refresh(); }, delay);
  }

  function refresh() {
    if (state.path === null) return;
    if (loading) { refreshPending = true; return; }
    loadFolder(state.path, { refresh: true });
  }

  async function loadFolder(path, options) {
    options = options || {};
    const isRefresh = !!options.refresh && path === state.path;
    const seq = ++state.listSeq;
    loading = true;
    const listHadFocus = !!(document.activeElement && document.activeElement.closest && document.activeElement.closest('#file-list'));
    if (!isRefresh) {
      const changed = path !== state.path;
      state.path = path;
      if (changed) {
        state.selected.clear();
        state.filter = '';
        $('#search').value = '';
      }
      renderBreadcrumb();
      updateTitle();
      $('#download-zip').href = zipURL(path);
      $('#file-list').setAttribute('aria-busy', 'true');
    }
    let data;
    try {
      data = await api('GET', listURL(path));
    } catch (e) {
      if (seq !== state.listSeq) return;
      loading = false;
      $('#file-list').setAttribute('aria-busy', 'false');
      if (e.status === 404 || e.status === 403) {
        if ((isRefresh || state.climbing === path) && path !== '') {
          await folderGone(path);
        } else {
          state.items = [];
          state.loaded = true;
          renderList(true);
          showEmpty('missing', e.message);
        }
      } else if (e.status === 0) {
        if (!isRefresh) showEmpty('error', 'The folder could not be loaded: the connection to the server was lost.');
        markLost();
        scheduleRefresh(3000);
      } else {
        report(e, 'Could not list the folder');
        if (!isRefresh) showEmpty('error', e.message);
      }
      afterLoad();
      return;
    }
    if (seq !== state.listSeq) return;
    loading = false;
    state.climbing = null;
    if (events && events.readyState === 1) markRestored();
    const scroll = window.scrollY;
    state.items = Array.isArray(data && data.items) ? data.items : [];
    state.loaded = true;
    // With accounts, the user's right in this folder: where it is not theirs to change, offer no change.
    state.folderReadOnly = !!(data && (data.access === 'read' || data.access === 'none'));
    const access = data && typeof data.access === 'string' ? data.access : null;
    const accessChanged = access !== state.folderAccess;
    state.folderAccess = access;
    applyReadOnly();
    if (accessChanged) applyInfo();
    $('#file-list').setAttribute('aria-busy', 'false');
    renderList(!isRefresh);
    syncPreview();
    // A place further down than the rows drawn so far waits for the rest.
    const scrollTo = (y) => {
      if (y > 0 && document.documentElement.scrollHeight < y + window.innerHeight) finishRows();
      window.scrollTo(0, y);
    };
    if (isRefresh) {
      scrollTo(scroll);
    } else {
      const saved = state.scrollByPath.get(path);
      scrollTo(saved || 0);
      // Opened from the list with the keyboard: continue in the new list.
      if (listHadFocus && state.focusAfterLoad === null && (document.activeElement === document.body || !document.activeElement)) {
        const first = $('#file-list > li .open');
        if (first) first.focus({ preventScroll: true });
      }
    }
    if (state.focusAfterLoad !== null) {
      const name = state.focusAfterLoad;
      state.focusAfterLoad = null;
      focusRow(name, true);
    }
    if (state.flashAfterLoad) {
      const name = state.flashAfterLoad;
      state.flashAfterLoad = null;
      flashRow(name);
    }
    afterLoad();
  }

  function afterLoad() {
    if (refreshPending) {
      refreshPending = false;
      scheduleRefresh(0);
    }
  }

  // The folder on screen was deleted or moved away: climb to the nearest folder that still exists.
  // A rename of the folder may be announced just after the listing failed: wait a moment
  // for it, and give up as soon as anything else changes the folder on screen.
  async function folderGone(path) {
    const seq = state.listSeq;
    const stale = () => state.listSeq !== seq || state.path !== path;
    await new Promise((resolve) => setTimeout(resolve, 400));
    if (stale()) return;
    let candidate = parentOf(path);
    while (candidate !== '') {
      try {
        await api('GET', listURL(candidate));
        break;
      } catch (e) {
        candidate = parentOf(candidate);
      }
      if (stale()) return;
    }
    if (stale()) return;
    if (state.climbing === null) toast('The folder “' + baseName(path) + '” was deleted or moved.', 'info');
    state.climbing = candidate; // if that folder goes too (a deletion still running), keep climbing
    navigate(candidate, true);
  }

  function itemKey(item) { return item.id ? 'id:' + item.id : 'name:' + item.name; }

  function visibleItems() {
    const query = fold(state.filter.trim());
    let items = state.items;
    if (query) items = items.filter((item) => fold(item.name).includes(query));
    const { key, dir } = state.sort;
    const time = (item) => {
      if (item._time === undefined) { const t = Date.parse(item.modified); item._time = isNaN(t) ? 0 : t; }
      return item._time;
    };
    const byName = (a, b) => collator.compare(a.name, b.name) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
    return items.slice().sort((a, b) => {
      const folderA = a.kind === 'directory';
      const folderB = b.kind === 'directory';
      if (folderA !== folderB) return folderA ? -1 : 1; // folders first, whatever the order
      let order = 0;
      if (key === 'size') {
        order = folderA ? (a.childCount || 0) - (b.childCount || 0) : (a.size || 0) - (b.size || 0);
      } else if (key === 'date') {
        order = time(a) - time(b);
      }
      if (order === 0) order = byName(a, b);
      return order * dir;
    });
  }

  function rowSignature(item) {
    return [item.name, item.kind, item.size, item.modified, item.childCount, item.writing, item.path, state.filter, state.info.readOnly, narrow.matches].join('\u0000');
  }

  // A long folder is drawn a screenful first and the rest while the page is idle, a
  // slice at a time, so that it answers at once; what needs every row (rows()) finishes
  // the drawing first.
  const FIRST_ROWS = 150;
  const whenIdle = window.requestIdleCallback
    ? (work) => window.requestIdleCallback(work, { timeout: 1000 })
    : (work) => window.setTimeout(() => work({ didTimeout: true, timeRemaining: () => 0 }), 0);
  const cancelIdle = window.cancelIdleCallback || window.clearTimeout;
  let pendingRows = null; // { items, next, existing, task }

  // The row drawn for the item before, if it shows the item as it is now.
  function keptRow(item, existing) {
    const li = existing.get(itemKey(item));
    return li && li.dataset.sig === rowSignature(item) ? li : null;
  }

  // The row for the item, its selection as the state says.
  function placeRow(item, li) {
    li.item = item;
    const selected = state.selected.has(li.dataset.key);
    li.classList.toggle('selected', selected);
    const box = li.querySelector('input.select');
    if (box) box.checked = selected;
    return li;
  }

  // Draws rows until the idle period ends (all of them without a deadline).
  function drawSlice(deadline) {
    const pending = pendingRows;
    if (!pending) return;
    cancelIdle(pending.task);
    const slice = [];
    const more = () => (deadline.didTimeout ? slice.length < 100 : deadline.timeRemaining() > 1);
    while (pending.next < pending.items.length && (!deadline || more() || slice.length === 0)) {
      const item = pending.items[pending.next];
      slice.push(placeRow(item, keptRow(item, pending.existing) || renderRow(item)));
      pending.next++;
    }
    $('#file-list').append(...slice);
    if (pending.next >= pending.items.length) pendingRows = null;
    else pending.task = whenIdle(drawSlice);
  }

  function finishRows() { if (pendingRows) drawSlice(null); }

  function renderList(resetFocus) {
    if (hooks.listWillRender) hooks.listWillRender();
    const list = $('#file-list');
    const items = visibleItems();
    const existing = new Map();
    for (const li of list.children) existing.set(li.dataset.key, li);
    // Rows made for a drawing that had not ended are kept for this one.
    if (pendingRows) {
      cancelIdle(pendingRows.task);
      for (const [key, li] of pendingRows.existing) if (!existing.has(key)) existing.set(key, li);
      pendingRows = null;
    }

    // Remember the focus so that a refresh does not lose it.
    const active = document.activeElement;
    const activeRow = active && active.closest ? active.closest('#file-list > li') : null;
    const activeKey = activeRow ? activeRow.dataset.key : null;
    const activeRole = active && active.dataset ? active.dataset.role : null;
    const activeIndex = activeRow ? Array.prototype.indexOf.call(list.children, activeRow) : -1;

    const shownKeys = items.map(itemKey);
    const keys = new Set(shownKeys);
    state.shownKeys = shownKeys;
    const allKeys = new Set(state.items.map(itemKey));
    for (const key of Array.from(state.selected)) if (!allKeys.has(key)) state.selected.delete(key);

    // Rows already drawn are only moved, so they cost nothing; past FIRST_ROWS new ones,
    // the rest are drawn in slices.
    const rows = [];
    let made = 0;
    for (const item of items) {
      let li = keptRow(item, existing);
      if (!li) {
        if (made >= FIRST_ROWS) break;
        made++;
        li = renderRow(item);
      }
      rows.push(placeRow(item, li));
    }
    // Keep nodes that did not change, so thumbnails don't flicker and the focus stays.
    let same = rows.length === list.children.length;
    if (same) for (let i = 0; i < rows.length; i++) if (list.children[i] !== rows[i]) { same = false; break; }
    if (!same) list.replaceChildren(...rows);
    if (rows.length < items.length) {
      pendingRows = { items, next: rows.length, existing, task: 0 };
      pendingRows.task = whenIdle(drawSlice);
    }

    if (!resetFocus && activeRow && !activeRow.isConnected) {
      let target = null;
      if (activeKey && keys.has(activeKey)) target = rows.find((r) => r.dataset.key === activeKey);
      else if (rows.length) target = rows[Math.min(activeIndex, rows.length - 1)];
      if (target) {
        const control = (activeRole && target.querySelector('[data-role="' + activeRole + '"]')) || target.querySelector('.open');
        if (control) control.focus({ preventScroll: true });
      }
    }

    renderSortHeader();
    updateSelectionUI();
    renderStatus(items);
    if (!items.length) {
      if (state.items.length) showEmpty('filter');
      else showEmpty('empty');
    } else {
      $('#empty').hidden = true;
    }
    if (hooks.listRendered) hooks.listRendered(items);
  }

  function renderRow(item) {
    const readOnly = !!state.info.readOnly;
    const path = item.path || joinPath(state.path, item.name);
    const isFolder = item.kind === 'directory';
    const type = fileType(item);
    const li = el('li', {
      class: 'item',
      dataset: { name: item.name, kind: item.kind, key: itemKey(item), path, sig: rowSignature(item) },
    });
    li.item = item;
    if (isFolder) li.dataset.dropPath = path;

    const check = el('span', { class: 'check' });
    check.append(el('input', { type: 'checkbox', class: 'select', 'aria-label': 'Select ' + item.name, dataset: { role: 'select' } }));

    const thumb = el('span', { class: 'thumb' }, icon(iconFor(item)));
    const thumbnail = thumbnailURL(item);
    if (thumbnail) {
      // The icon stays until the thumbnail has arrived; a refused thumbnail leaves the icon.
      // loading before src: an image given its src first starts loading at once, lazy or not.
      const img = el('img', { loading: 'lazy', decoding: 'async', src: thumbnail, alt: '', draggable: 'false' });
      img.addEventListener('load', () => { thumb.classList.add('has-thumb'); });
      img.addEventListener('error', () => { img.remove(); });
      thumb.append(img);
    }

    const href = isFolder ? hashFor(path) : openURL(path);
    const nameLink = el('a', { class: 'open', href, draggable: 'false', dataset: { role: 'open' }, title: item.name });
    appendHighlighted(nameLink, item.name, state.filter.trim());
    const nameCell = el('span', { class: 'name-cell' }, nameLink);
    if (item.writing) nameCell.append(el('span', { class: 'tag writing', title: 'Still being written', text: 'writing' }));
    if (item.kind === 'symlink') nameCell.append(el('span', { class: 'tag', text: 'link' }));

    let sizeText = '';
    if (isFolder) sizeText = typeof item.childCount === 'number' ? formatCount(item.childCount, 'item', 'items') : '';
    else if (item.kind === 'file' || item.kind === 'symlink') sizeText = formatSize(item.size);
    const modified = item.modified ? new Date(item.modified) : null;
    const meta = el('span', { class: 'meta' },
      el('span', { class: 'size', title: !isFolder && typeof item.size === 'number' ? item.size.toLocaleString() + ' bytes' : null, text: sizeText }),
      el('time', { class: 'date', datetime: item.modified || null, title: modified && !isNaN(modified) ? longFormat.format(modified) : null, text: formatDate(modified) }));

    const actions = el('span', { class: 'actions' });
    if (isFolder) {
      actions.append(el('a', { class: 'icon-button download zip', href: zipURL(path), download: '', draggable: 'false', title: 'Download as ZIP', 'aria-label': 'Download ' + item.name + ' as ZIP', dataset: { role: 'download' } }, icon('zip')));
    } else if (item.kind !== 'other') {
      actions.append(el('a', { class: 'icon-button download', href: fileURL(path, true), download: item.name, draggable: 'false', title: 'Download', 'aria-label': 'Download ' + item.name, dataset: { role: 'download' } }, icon('download')));
    }
    if (!readOnly) {
      const rename = iconButton('rename', 'Rename', 'rename', null);
      rename.setAttribute('aria-label', 'Rename ' + item.name);
      rename.dataset.role = 'rename';
      const move = iconButton('move', 'Move', 'move', null);
      move.setAttribute('aria-label', 'Move ' + item.name);
      move.dataset.role = 'move';
      const del = iconButton('delete', 'Delete', 'delete', null);
      del.setAttribute('aria-label', 'Delete ' + item.name);
      del.dataset.role = 'delete';
      actions.append(rename, move, del);
      li.draggable = true;
    }

    if (readOnly) li.append(el('span', { class: 'check' }), thumb, nameCell, meta, actions);
    else li.append(check, thumb, nameCell, meta, actions);
    return li;
  }

  function appendHighlighted(node, text, query) {
    if (query) {
      const index = fold(text).indexOf(fold(query));
      // Folding can change lengths (rare); only highlight when it did not.
      if (index >= 0 && fold(text).length === text.length) {
        node.append(text.slice(0, index), el('mark', { text: text.slice(index, index + query.length) }), text.slice(index + query.length));
        return;
      }
    }
    node.append(text);
  }

  function showEmpty(kind, message) {
    const box = $('#empty');
    box.hidden = false;
    if (kind === 'filter') {
      box.replaceChildren(icon('search'), el('p', { text: 'Nothing here matches “' + state.filter.trim() + '”.' }));
    } else if (kind === 'empty') {
      box.replaceChildren(icon('folder'), el('p', { text: 'This folder is empty.' }),
        state.info.readOnly ? null : el('p', { text: 'Drop files or folders here, or use Upload.' }));
    } else if (kind === 'missing') {
      box.replaceChildren(icon('alert'), el('p', { text: message || 'This folder does not exist.' }),
        el('p', null, el('a', { href: '#/', text: 'Open “' + (state.info.name || 'the shared folder') + '”' })));
    } else {
      box.replaceChildren(icon('alert'), el('p', { text: message || 'Something went wrong.' }),
        el('p', null, el('button', { type: 'button', class: 'button', onclick: () => loadFolder(state.path) }, 'Try again')));
    }
  }

  function renderStatus(visible) {
    const folders = state.items.filter((i) => i.kind === 'directory').length;
    const files = state.items.length - folders;
    const bytes = state.items.reduce((sum, i) => sum + (i.kind === 'file' && typeof i.size === 'number' ? i.size : 0), 0);
    let text = [folders ? plural(folders, 'folder') : '', files ? plural(files, 'file') : ''].filter(Boolean).join(', ') || 'Empty';
    if (files) text += ' · ' + formatSize(bytes);
    if (state.filter.trim()) text = visible.length + ' of ' + state.items.length + ' shown · ' + text;
    $('#status').textContent = state.loaded ? text : '';
  }

  function renderSortHeader() {
    for (const button of document.querySelectorAll('.sort')) {
      const active = button.dataset.sort === state.sort.key;
      button.setAttribute('aria-pressed', String(active));
      $('.sort-arrow', button).textContent = active ? (state.sort.dir > 0 ? '▲' : '▼') : '';
      $('.sort-state', button).textContent = active ? (state.sort.dir > 0 ? ', sorted ascending' : ', sorted descending') : '';
    }
  }

  function setSort(key) {
    if (state.sort.key === key) state.sort.dir = -state.sort.dir;
    else state.sort = { key, dir: key === 'name' ? 1 : -1 };
    try { localStorage.setItem('fileshare.sort', JSON.stringify(state.sort)); } catch (e) { /* private mode */ }
    renderList();
  }

  function loadSort() {
    try {
      const saved = JSON.parse(localStorage.getItem('fileshare.sort') || 'null');
      if (saved && ['name', 'size', 'date'].includes(saved.key) && (saved.dir === 1 || saved.dir === -1)) state.sort = saved;
    } catch (e) { /* ignore */ }
  }

  function drawnRows() { return Array.from($('#file-list').children); }
  function rows() { finishRows(); return drawnRows(); }
  function rowFor(name) { return rows().find((li) => li.dataset.name === name) || null; }

  function focusRow(name, scroll) {
    const li = rowFor(name);
    if (!li) return false;
    const link = $('.open', li);
    link.focus({ preventScroll: !scroll });
    if (scroll) li.scrollIntoView({ block: 'nearest' });
    return true;
  }

  function flashRow(name) {
    const li = rowFor(name);
    if (!li) return;
    li.classList.remove('flash');
    void li.offsetWidth;
    li.classList.add('flash');
    // Off once played: a re-inserted node would replay its animation at every refresh.
    li.addEventListener('animationend', () => li.classList.remove('flash'), { once: true });
    li.scrollIntoView({ block: 'nearest' });
  }

  // ---------------------------------------------------------------- selection

  function selectedItems() {
    return state.items.filter((item) => state.selected.has(itemKey(item)));
  }

  function setSelected(item, on, li) {
    const key = itemKey(item);
    if (on) state.selected.add(key);
    else state.selected.delete(key);
    // A row not drawn yet takes its state from state.selected when it is.
    if (!li) li = drawnRows().find((r) => r.dataset.key === key);
    if (li) {
      li.classList.toggle('selected', on);
      const box = $('input.select', li);
      if (box) box.checked = on;
    }
    if (!setSelected.bulk) updateSelectionUI();
  }

  function setSelectedRows(list, on) {
    setSelected.bulk = true;
    try { for (const li of list) if (li.item) setSelected(li.item, on, li); } finally { setSelected.bulk = false; }
    updateSelectionUI();
  }

  function clearSelection() {
    state.selected.clear();
    for (const li of drawnRows()) {
      li.classList.remove('selected');
      const box = $('input.select', li);
      if (box) box.checked = false;
    }
    updateSelectionUI();
  }

  function updateSelectionUI() {
    if (source.link) return; // nothing to select where nothing can be changed
    const count = state.selected.size;
    $('#selection-bar').hidden = count === 0;
    $('#selection-count').textContent = count ? plural(count, 'item') + ' selected' : '';
    const all = $('#select-all');
    const shown = state.shownKeys || [];
    const selectedShown = shown.filter((key) => state.selected.has(key)).length;
    all.checked = shown.length > 0 && selectedShown === shown.length;
    all.indeterminate = selectedShown > 0 && selectedShown < shown.length;
    all.disabled = shown.length === 0;
  }

  // ---------------------------------------------------------------- actions

  function validName(name, existingNames, current) {
    const trimmed = name.trim();
    if (!trimmed) return 'Please enter a name.';
    if (trimmed.includes('/')) return 'A name cannot contain “/”.';
    if (trimmed === '.' || trimmed === '..') return 'This name is not allowed.';
    if (trimmed.includes('\u0000')) return 'This name is not allowed.';
    if (trimmed !== current && existingNames && existingNames.has(trimmed)) return '“' + trimmed + '” already exists here.';
    return null;
  }

  async function newFolder() {
    if (state.info.readOnly) return;
    const here = state.path;
    const names = new Set(state.items.map((i) => i.name));
    let suggestion = 'New folder';
    for (let n = 2; names.has(suggestion); n++) suggestion = 'New folder ' + n;
    const name = await promptDialog({ title: 'New folder', label: 'Folder name', value: suggestion, ok: 'Create', validate: (v) => validName(v, names) });
    if (name === null) return;
    const path = joinPath(here, name.trim());
    try {
      await api('POST', '/api/mkdir', { json: { path } });
      toast('Folder “' + name.trim() + '” created.', 'success');
      if (state.path === here) {
        state.flashAfterLoad = name.trim();
        scheduleRefresh(0);
      }
    } catch (e) {
      report(e, 'Could not create “' + name.trim() + '”');
    }
  }

  // Moves (or renames) one item; asks before replacing. Returns true when done.
  async function moveItem(from, to, label) {
    try {
      await api('POST', '/api/move', { json: { from, to, overwrite: false } });
      return true;
    } catch (e) {
      if (e.status !== 409) { report(e, 'Could not ' + label + ' “' + baseName(from) + '”'); return false; }
      const answer = await confirmDialog({
        title: 'Replace “' + baseName(to) + '”?',
        message: '“' + baseName(to) + '” already exists in ' + (parentOf(to) ? '“' + parentOf(to) + '”' : (state.info.name || 'the shared folder')) + '. Replace it? What it holds now is kept as an earlier version of “' + baseName(to) + '”: you can undo this, or restore it from its versions.',
        ok: 'Replace',
        danger: true,
      });
      if (answer !== 'ok') return false;
      try {
        await api('POST', '/api/move', { json: { from, to, overwrite: true } });
        toast('“' + baseName(to) + '” replaced; what it held is kept as a version.', 'success', 15000,
          [{ label: 'Undo', class: 'toast-undo', run: () => undoReplace(from, to) }]);
        return true;
      } catch (e2) {
        report(e2, 'Could not ' + label + ' “' + baseName(from) + '”');
        return false;
      }
    }
  }

  // Undoes a move over a file: the file replaced gets its content back (from its newest version)
  // and the moved one goes back under its name.
  async function undoReplace(from, to) {
    try {
      const versions = ((await api('GET', '/api/versions?path=' + encodeURIComponent(to))) || {}).versions || [];
      const replaced = versions.find((v) => !v.conflict && v.kind !== 'directory');
      if (!replaced) throw new ApiError(404, 'Its earlier version is not kept any more.');
      await api('POST', '/api/versions/restore', { json: { path: to, version: replaced.version } });
      // What was moved there is now the newest version of it: put back under its own name.
      const moved = (((await api('GET', '/api/versions?path=' + encodeURIComponent(to))) || {}).versions || [])[0];
      const response = await fetch(serverURL('/api/versions/content?path=' + encodeURIComponent(to) + '&version=' + encodeURIComponent(moved.version)), { credentials: 'same-origin', cache: 'no-store' });
      if (await unauthorized(response)) return;
      if (!response.ok) throw new ApiError(response.status, messageFor(response.status, null));
      const put = await fetch(serverURL(fileURL(from)), { method: 'PUT', body: await response.blob(), headers: { 'If-None-Match': '*' }, credentials: 'same-origin' });
      if (await unauthorized(put)) return;
      if (!put.ok) throw new ApiError(put.status, messageFor(put.status, null));
      toast('Undone: “' + baseName(from) + '” and “' + baseName(to) + '” are back as they were.', 'success');
      scheduleRefresh(0);
    } catch (e) { report(e, 'It could not be undone'); }
  }

  async function renameItem(item) {
    if (state.info.readOnly) return;
    const here = state.path;
    const from = item.path || joinPath(here, item.name);
    const names = new Set(state.items.map((i) => i.name));
    const dot = item.kind === 'directory' ? -1 : item.name.lastIndexOf('.');
    const name = await promptDialog({
      title: 'Rename', label: 'New name', value: item.name, ok: 'Rename',
      selectEnd: dot > 0 ? dot : item.name.length,
      validate: (v) => (v.trim() === item.name ? null : validName(v, null, item.name)),
    });
    if (name === null || name.trim() === item.name) return;
    const to = joinPath(parentOf(from), name.trim());
    if (await moveItem(from, to, 'rename')) {
      if (state.path === here) {
        state.flashAfterLoad = name.trim();
        state.focusAfterLoad = name.trim();
        scheduleRefresh(0);
      }
    }
  }

  async function chooseFolder(title, moving) {
    const answer = await promptDialog({
      title, label: 'Destination folder', value: state.path === '' ? '/' : state.path, ok: 'Move here',
      picker: { moving },
      validate: async (value) => {
        let folder;
        try { folder = normalizeFolder(value); } catch (e) { return e.message; }
        if (moving.some((m) => isInside(folder, m))) return 'A folder cannot be moved into itself.';
        if (folder === '') return null;
        try {
          const listing = await api('GET', listURL(folder));
          if (!listing) return null;
        } catch (e) {
          if (e.status === 404) return 'There is no folder “' + folder + '”.';
          return e.message;
        }
        return null;
      },
    });
    if (answer === null) return null;
    return normalizeFolder(answer);
  }

  async function moveItems(items, destination) {
    if (state.info.readOnly || !items.length) return;
    const paths = items.map((item) => item.path || joinPath(state.path, item.name));
    if (destination === undefined) {
      destination = await chooseFolder(items.length === 1 ? 'Move “' + items[0].name + '”' : 'Move ' + plural(items.length, 'item'), paths);
      if (destination === null) return;
    }
    let moved = 0;
    for (const from of paths) {
      if (parentOf(from) === destination) continue;
      if (isInside(destination, from)) { toast('“' + baseName(from) + '” cannot be moved into itself.'); continue; }
      if (await moveItem(from, joinPath(destination, baseName(from)), 'move')) moved++;
    }
    if (moved) {
      toast((moved === 1 ? '1 item' : moved + ' items') + ' moved to “' + displayFolder(destination) + '”.', 'success');
      clearSelection();
      scheduleRefresh(0);
    }
  }

  async function deleteItems(items) {
    if (state.info.readOnly || !items.length) return;
    const one = items.length === 1 ? items[0] : null;
    let message;
    if (one) {
      message = one.kind === 'directory'
        ? 'The folder “' + one.name + '” and everything in it will go to the Trash. You can restore it from there.'
        : '“' + one.name + '” will go to the Trash. You can restore it from there.';
    } else {
      message = plural(items.length, 'item') + ', with everything in the folders among them, will go to the Trash. You can restore them from there.';
    }
    const all = rows();
    const focusIndex = all.findIndex((li) => li.contains(document.activeElement));
    const answer = await confirmDialog({ title: one ? 'Delete “' + one.name + '”?' : 'Delete ' + plural(items.length, 'item') + '?', message, ok: 'Delete', danger: true });
    if (answer !== 'ok') return;
    let deleted = 0;
    const gone = [];
    for (const item of items) {
      const path = item.path || joinPath(state.path, item.name);
      try {
        await api('DELETE', fileURL(path));
        deleted++;
        gone.push({ path, id: item.id });
        state.selected.delete(itemKey(item));
        const li = rows().find((r) => r.dataset.key === itemKey(item));
        if (li) li.remove();
      } catch (e) {
        if (e.status === 404) { deleted++; continue; }
        report(e, 'Could not delete “' + item.name + '”');
      }
    }
    if (deleted) {
      const actions = [{ label: 'Open Trash', class: 'toast-trash', run: () => openTrash() }];
      if (gone.length) actions.unshift({ label: 'Undo', class: 'toast-undo', run: () => undoDelete(gone) });
      toast((deleted === 1 && one ? '“' + one.name + '”' : plural(deleted, 'item')) + ' moved to the Trash.', 'success', 15000, actions);
    }
    if (focusIndex >= 0) {
      const left = rows();
      const next = left[Math.min(focusIndex, left.length - 1)];
      if (next) $('.open', next).focus();
    }
    updateSelectionUI();
    scheduleRefresh(0);
  }

  // Brings deleted items back from the trash: the newest entry of each (by id, else by path).
  async function undoDelete(gone) {
    try {
      const trash = ((await api('GET', '/api/trash')) || {}).items || [];
      let restored = 0;
      for (const item of gone) {
        const entry = trash.find((t) => (item.id && t.id === item.id) || t.path === item.path);
        if (!entry) continue;
        await api('POST', '/api/trash/restore', { json: { trashId: entry.trashId } });
        restored++;
      }
      if (restored < gone.length) toast('Some of it is no longer in the Trash.', 'error');
      else toast(restored === 1 ? '“' + baseName(gone[0].path) + '” is back.' : plural(restored, 'item') + ' are back.', 'success');
      scheduleRefresh(0);
    } catch (e) { report(e, 'It could not be brought back'); }
  }

  function openItem(item) {
    if (item.kind === 'directory') navigate(item.path || joinPath(state.path, item.name));
    else openPreview(item);
  }

  // ---------------------------------------------------------------- list events

  function setupList() {
    const list = $('#file-list');
    list.addEventListener('click', (e) => {
      const li = e.target.closest('#file-list > li');
      if (!li || !li.item) return;
      const item = li.item;
      const target = e.target.closest('[data-role]');
      const role = target ? target.dataset.role : null;
      if (role === 'open') {
        if (item.kind === 'directory') return; // the link changes the hash
        if (e.ctrlKey || e.metaKey || e.shiftKey || e.altKey || e.button !== 0) return;
        e.preventDefault();
        openPreview(item);
      } else if (role === 'rename') {
        renameItem(item);
      } else if (role === 'move') {
        moveItems(state.selected.has(itemKey(item)) && state.selected.size > 1 ? selectedItems() : [item]);
      } else if (role === 'delete') {
        deleteItems([item]);
      } else if (role === 'select') {
        setSelected(item, e.target.checked);
      } else if (!role && !e.target.closest('a, button, input')) {
        // A click on the row itself selects it (in a writable share).
        if (!state.info.readOnly && window.getSelection().isCollapsed) setSelected(item, !state.selected.has(itemKey(item)));
      }
    });
    list.addEventListener('dblclick', (e) => {
      const li = e.target.closest('#file-list > li');
      if (!li || !li.item || e.target.closest('a, button, input')) return;
      openItem(li.item);
    });
    list.addEventListener('keydown', onListKey);

    // Drag items onto a folder (or a breadcrumb) to move them.
    list.addEventListener('dragstart', (e) => {
      const li = e.target.closest && e.target.closest('#file-list > li');
      if (!li || !li.item || state.info.readOnly) return;
      const items = state.selected.has(itemKey(li.item)) ? selectedItems() : [li.item];
      internalDrag = items;
      e.dataTransfer.effectAllowed = 'move';
      e.dataTransfer.setData('application/x-fileshare-items', JSON.stringify(items.map((i) => i.name)));
      e.dataTransfer.setData('text/plain', items.map((i) => i.name).join('\n'));
    });
    list.addEventListener('dragend', () => { internalDrag = null; clearDropTarget(); });

    for (const button of document.querySelectorAll('.sort')) button.addEventListener('click', () => setSort(button.dataset.sort));

    const search = $('#search');
    search.addEventListener('input', () => {
      state.filter = search.value;
      renderList();
    });
    search.addEventListener('keydown', (e) => {
      if (e.key === 'Escape' && search.value) { e.preventDefault(); e.stopPropagation(); search.value = ''; state.filter = ''; renderList(); }
      if (e.key === 'Enter' || e.key === 'ArrowDown') {
        const first = rows()[0];
        if (first) { e.preventDefault(); $('.open', first).focus(); }
      }
    });
  }

  // The selection's bar and New folder: the page's, not a link's.
  function setupSelection() {
    $('#select-all').addEventListener('change', (e) => {
      setSelectedRows(rows(), e.target.checked);
    });
    $('#selection-clear').addEventListener('click', clearSelection);
    $('#selection-delete').addEventListener('click', () => deleteItems(selectedItems()));
    $('#selection-move').addEventListener('click', () => moveItems(selectedItems()));
    $('#new-folder').addEventListener('click', newFolder);
  }

  function onListKey(e) {
    const li = e.target.closest('#file-list > li');
    if (!li || !li.item) return;
    if (e.target.matches('input[type="text"]')) return;
    const all = rows();
    const index = all.indexOf(li);
    const move = (to) => {
      const target = all[Math.max(0, Math.min(all.length - 1, to))];
      if (!target) return;
      $('.open', target).focus();
      if (e.shiftKey && !state.info.readOnly) setSelected(target.item, true);
    };
    switch (e.key) {
      case 'ArrowDown': e.preventDefault(); if (e.shiftKey && !state.info.readOnly) setSelected(li.item, true); move(index + 1); break;
      case 'ArrowUp':
        e.preventDefault();
        if (e.altKey || e.metaKey) { goUp(); break; }
        if (e.shiftKey && !state.info.readOnly) setSelected(li.item, true);
        move(index - 1);
        break;
      case 'Home': e.preventDefault(); move(0); break;
      case 'End': e.preventDefault(); move(all.length - 1); break;
      case 'Enter':
        if (e.target.matches('a.open')) return; // the link itself opens it
        if (e.target.matches('button, a')) return;
        e.preventDefault();
        openItem(li.item);
        break;
      case ' ':
        if (e.target.matches('button, input')) return;
        if (state.info.readOnly) return;
        e.preventDefault();
        setSelected(li.item, !state.selected.has(itemKey(li.item)));
        break;
      case 'Delete':
      case 'Backspace':
        if (e.key === 'Backspace' && !e.metaKey) return;
        if (state.info.readOnly) return;
        e.preventDefault();
        deleteItems(state.selected.has(itemKey(li.item)) ? selectedItems() : [li.item]);
        break;
      case 'F2':
        e.preventDefault();
        renameItem(li.item);
        break;
      case 'a':
        if ((e.ctrlKey || e.metaKey) && !state.info.readOnly) {
          e.preventDefault();
          setSelectedRows(all, true);
        }
        break;
      case 'Escape':
        if (state.selected.size) { e.preventDefault(); clearSelection(); }
        break;
      default:
    }
  }

  function goUp() {
    if (state.path) navigate(parentOf(state.path));
  }

  function setupKeys() {
    document.addEventListener('keydown', (e) => {
      if (e.defaultPrevented) return;
      const typing = e.target.matches && e.target.matches('input, textarea, select, [contenteditable]');
      const modal = document.querySelector('dialog[open]');
      if (modal) return;
      if (e.key === '/' && !typing) { e.preventDefault(); $('#search').focus(); }
      else if (e.key === 'ArrowUp' && (e.altKey || e.metaKey) && !typing) { e.preventDefault(); goUp(); }
      else if (e.key === 'Escape' && !typing && state.selected.size) clearSelection();
    });
    // The hash names the folder shown, so the skip link cannot be a plain #fragment
    // (that would open a folder named "file-list"): it moves the focus itself.
    $('.skip-link').addEventListener('click', (e) => {
      e.preventDefault();
      const first = rows()[0];
      (first ? $('.open', first) : $('#folder-title')).focus();
    });
  }

  // ---------------------------------------------------------------- preview

  let previewItem = null;
  let previewAbort = null;

  function previewableSiblings() {
    return visibleItems().filter((i) => i.kind !== 'directory' && i.kind !== 'other');
  }

  function showPreviewMeta(item) {
    const modified = item.modified ? new Date(item.modified) : null;
    $('#preview-meta').textContent = [formatSize(item.size), modified && !isNaN(modified) ? mediumFormat.format(modified) : ''].filter(Boolean).join(' · ');
  }

  // The file on screen changed (a save, a version restored, someone else): the header says so,
  // and the content shown is the file's now (unless the editor holds it: it follows by itself).
  function syncPreview() {
    const shown = previewItem;
    if (!shown || !$('#preview').open) return;
    const now = state.items.find((i) => (shown.id && i.id === shown.id) || i.name === shown.name);
    if (!now || now === shown || now.kind !== shown.kind) return;
    const changed = now.size !== shown.size || now.modified !== shown.modified || (now.etag && now.etag !== shown.etag);
    if (!changed) return;
    if (editor && editor.item === shown) {
      Object.assign(shown, { size: now.size, modified: now.modified, etag: now.etag });
      showPreviewMeta(shown);
      return;
    }
    const focused = document.activeElement;
    openPreview(now, { again: true });
    if (focused && focused.isConnected) focused.focus({ preventScroll: true });
  }

  // The viewer is a step in the browser's history: Back closes it (on a phone, the way back), and
  // closing it otherwise takes the step back out, so the folder's own steps stay as they were.
  let previewInHistory = false;
  function previewPushed() { return !!(history.state && history.state.fileshareViewer); }

  function openPreview(item, options) {
    const dialog = $('#preview');
    const path = item.path || joinPath(state.path, item.name);
    const type = fileType(item);
    closePreviewContent();
    previewItem = item;
    $('#preview-title').textContent = item.name;
    showPreviewMeta(item);
    const url = fileURL(path);
    // Where looking is not free (a link that counts its downloads), no way to the file but Download.
    $('#preview-open').hidden = !url;
    if (url) $('#preview-open').href = url;
    const download = $('#preview-download');
    download.href = fileURL(path, true);
    download.setAttribute('download', item.name);
    const body = $('#preview-body');
    body.className = 'preview-body';
    if (!url) {
      body.append(countedPreview(item));
    } else if (hooks.preview && hooks.preview(item, body)) {
      // Shown by viewer.js (Markdown, comics).
    } else if (type === 'image') {
      const img = el('img', { src: url, alt: item.name });
      img.addEventListener('click', () => body.classList.toggle('zoomed'));
      img.addEventListener('error', () => { body.replaceChildren(previewInfo(item, 'This image cannot be shown by the browser.')); checkSession(); });
      body.append(img);
    } else if (type === 'video') {
      body.classList.add('has-media');
      const video = el('video', { src: url, controls: true, autoplay: true, playsinline: true, preload: 'metadata' });
      video.addEventListener('error', () => body.replaceChildren(previewInfo(item, 'This video cannot be played by the browser.')));
      body.append(video);
    } else if (type === 'audio') {
      body.classList.add('has-media');
      const audio = el('audio', { src: url, controls: true, autoplay: true, preload: 'metadata' });
      audio.addEventListener('error', () => body.replaceChildren(previewInfo(item, 'This audio cannot be played by the browser.')));
      body.append(audio);
    } else if (type === 'pdf') {
      body.append(el('iframe', { src: url, title: item.name }));
    } else if (type === 'text') {
      loadTextPreview(item, url, body);
    } else {
      body.append(previewInfo(item, item.kind === 'symlink' ? 'A symbolic link.' : 'No preview for this kind of file.'));
    }
    const siblings = previewableSiblings();
    const index = siblings.findIndex((i) => i.name === item.name);
    $('#preview-prev').hidden = index <= 0;
    $('#preview-next').hidden = index < 0 || index >= siblings.length - 1;
    if (!dialog.open) {
      openModal(dialog);
      if (!previewPushed()) history.pushState({ fileshareViewer: true }, '');
      previewInHistory = true;
    }
    if (!(options && options.again)) $('#preview-close').focus();
  }

  // What a link that counts its downloads shows of a file: its thumbnail (a small picture made by
  // the server, which spends nothing), and the Download that counts.
  function countedPreview(item) {
    const note = 'This link allows only so many downloads: the file itself comes with Download.';
    const thumbnail = thumbnailURL(item);
    if (!thumbnail) return previewInfo(item, note);
    const shown = previewInfo(item, note, el('img', { class: 'counted-preview', src: thumbnail, alt: item.name }));
    $('img', shown).addEventListener('error', (e) => e.target.replaceWith(icon(iconFor(item))));
    return shown;
  }

  function previewInfo(item, text, picture) {
    const path = item.path || joinPath(state.path, item.name);
    return el('div', { class: 'preview-info' }, picture || icon(iconFor(item)), el('p', { text }),
      el('a', { class: 'button primary', href: fileURL(path, true), download: item.name }, icon('download'), 'Download (' + formatSize(item.size) + ')'));
  }

  async function loadTextPreview(item, url, body) {
    const pre = el('pre', { id: 'preview-text', tabindex: '0', text: 'Loading…' });
    const wrap = el('div', { class: 'preview-text' }, pre);
    body.append(wrap);
    previewAbort = new AbortController();
    const signal = previewAbort.signal;
    try {
      const response = await fetch(serverURL(url), { headers: { Range: 'bytes=0-' + (TEXT_PREVIEW_BYTES - 1) }, credentials: 'same-origin', cache: 'no-cache', signal });
      if (await unauthorized(response)) return;
      if (!response.ok) {
        let message = '';
        try { message = messageFor(response.status, await response.json()); } catch (e) { message = messageFor(response.status, null); }
        throw new ApiError(response.status, message);
      }
      // Read at most 1 MiB even if the server ignored the Range header.
      const reader = response.body.getReader();
      const chunks = [];
      let total = 0;
      while (total < TEXT_PREVIEW_BYTES) {
        const { done, value } = await reader.read();
        if (done) break;
        chunks.push(value);
        total += value.length;
      }
      reader.cancel().catch(() => {});
      const bytes = new Uint8Array(Math.min(total, TEXT_PREVIEW_BYTES));
      let offset = 0;
      for (const chunk of chunks) {
        const part = chunk.subarray(0, Math.min(chunk.length, bytes.length - offset));
        bytes.set(part, offset);
        offset += part.length;
        if (offset >= bytes.length) break;
      }
      if (signal.aborted || previewItem !== item) return;
      if (bytes.subarray(0, 8000).includes(0)) {
        body.replaceChildren(previewInfo(item, 'This file looks binary: there is no text preview.'));
        return;
      }
      pre.textContent = new TextDecoder('utf-8').decode(bytes);
      const size = typeof item.size === 'number' ? item.size : 0;
      if (size > bytes.length) {
        wrap.append(el('p', { class: 'preview-note', text: 'Showing the first ' + formatSize(bytes.length) + ' of ' + formatSize(size) + '. Download the file to see all of it.' }));
      } else if (!state.info.readOnly) {
        const path = item.path || joinPath(state.path, item.name);
        wrap.prepend(el('div', { class: 'editor-bar' },
          el('button', { type: 'button', id: 'preview-edit', class: 'button', onclick: () => startEditor(item, path, body) }, icon('rename'), 'Edit')));
      }
    } catch (e) {
      if (e.name === 'AbortError') return;
      if (previewItem !== item) return;
      pre.textContent = '';
      body.replaceChildren(previewInfo(item, 'The text could not be loaded: ' + e.message));
    }
  }

  function closePreviewContent() {
    if (previewAbort) { previewAbort.abort(); previewAbort = null; }
    closeEditor();
    const body = $('#preview-body');
    for (const media of body.querySelectorAll('video, audio')) {
      media.pause();
      media.removeAttribute('src');
      media.load();
    }
    body.replaceChildren();
  }

  function stepPreview(delta) {
    if (!previewItem) return;
    const siblings = previewableSiblings();
    const index = siblings.findIndex((i) => i.name === previewItem.name);
    const next = siblings[index + delta];
    if (next) openPreview(next);
  }

  // ---------------------------------------------------------------- versions and trash

  // What replaced or deleted content: every overwrite and delete made
  // through fileshare keeps the previous content (GET /api/versions,
  // /api/trash); these dialogs show it, with who, when and from where, and
  // put it back.
  // To the second: an editing session's versions may be a minute apart or less.
  const secondsFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
  function formatWhen(value) {
    const date = new Date(value);
    return isNaN(date) ? '' : secondsFormat.format(date);
  }

  function formatWho(origin) {
    if (!origin || typeof origin !== 'object') return 'another program';
    const faces = { api: 'the web page', dav: 'a connected drive (WebDAV)', tus: 'an upload app', page: 'the web page', inbox: 'the Inbox' };
    const who = origin.user ? origin.user : 'someone';
    return origin.face ? who + ' through ' + (faces[origin.face] || origin.face) : who;
  }

  async function openVersions(path) {
    const dialog = $('#versions');
    const list = $('#versions-list');
    $('#versions-title').textContent = 'Versions of “' + baseName(path) + '”';
    $('#versions-note').textContent = 'Loading…';
    list.replaceChildren();
    if (!dialog.open) openModal(dialog);
    $('#versions-title').focus();
    let answer;
    try { answer = await api('GET', '/api/versions?path=' + encodeURIComponent(path)); } catch (e) {
      $('#versions-note').textContent = 'The versions could not be loaded: ' + e.message;
      return;
    }
    const versions = (answer && answer.versions) || [];
    $('#versions-note').textContent = versions.length
      ? 'Newest first. An editing session keeps one version: what the file held before it. Restoring one keeps what it replaces as a version too.'
      : 'No earlier versions. They are kept whenever the file is replaced or deleted through fileshare (not by other programs).';
    for (const version of versions) {
      const contentURL = '/api/versions/content?path=' + encodeURIComponent(path) + '&version=' + encodeURIComponent(version.version);
      const when = formatWhen(version.saved);
      const item = el('li', { class: 'record' },
        el('div', { class: 'record-text' },
          el('strong', { text: when || version.version }),
          version.conflict ? el('span', { class: 'badge warning', text: 'conflict' }) : null,
          el('span', { class: 'record-meta', text: formatSize(version.size) + ' · replaced by ' + formatWho(version.origin) })),
        el('div', { class: 'record-actions' },
          el('a', { class: 'button', href: contentURL, download: baseName(path), 'aria-label': 'Download the version of ' + (when || version.version) }, icon('download'), 'Download'),
          el('button', { type: 'button', class: 'button write-action', 'aria-label': 'Restore the version of ' + (when || version.version), onclick: () => restoreVersion(path, version, when) }, icon('history'), 'Restore')));
      list.append(item);
    }
  }

  async function restoreVersion(path, version, when) {
    const answer = await confirmDialog({ title: 'Restore this version?', message: '“' + baseName(path) + '” gets the content it had ' + (when ? 'before ' + when : 'then') + '. What it holds now is kept as a version.', ok: 'Restore' });
    if (answer !== 'ok') return;
    try {
      await api('POST', '/api/versions/restore', { json: { path, version: version.version } });
      toast('“' + baseName(path) + '” restored.', 'success');
      openVersions(path);
      scheduleRefresh(0);
    } catch (e) { report(e, 'The version could not be restored'); }
  }

  async function openTrash() {
    const dialog = $('#trash');
    const list = $('#trash-list');
    $('#trash-note').textContent = 'Loading…';
    list.replaceChildren();
    if (!dialog.open) openModal(dialog);
    $('#trash-title').focus();
    let answer;
    try { answer = await api('GET', '/api/trash'); } catch (e) {
      $('#trash-note').textContent = 'The trash could not be loaded: ' + e.message;
      return;
    }
    const items = (answer && answer.items) || [];
    $('#trash-note').textContent = items.length
      ? 'What was deleted, newest first. Items wait here for a while (the oldest go first when the Trash is full); restore one to put it back where it was.'
      : 'The trash is empty.';
    for (const entry of items) {
      const when = formatWhen(entry.deleted);
      list.append(el('li', { class: 'record' },
        el('div', { class: 'record-text' },
          el('strong', { text: entry.path }),
          el('span', { class: 'record-meta', text: [entry.kind === 'directory' ? 'folder' : formatSize(entry.size), when && 'deleted ' + when, 'by ' + formatWho(entry.by)].filter(Boolean).join(' · ') })),
        el('div', { class: 'record-actions write-action' },
          el('button', { type: 'button', class: 'button', 'aria-label': 'Restore ' + entry.path, onclick: () => restoreTrashed(entry) }, icon('history'), 'Restore'),
          el('button', { type: 'button', class: 'button danger', 'aria-label': 'Delete ' + entry.path + ' for good', onclick: () => purgeTrashed(entry) }, icon('delete'), 'Delete for good'))));
    }
  }

  async function restoreTrashed(entry) {
    try {
      const answer = await api('POST', '/api/trash/restore', { json: { trashId: entry.trashId } });
      const where = (answer && answer.path) || entry.path;
      toast(where === entry.path ? '“' + where + '” is back.' : '“' + entry.path + '” is back, as “' + where + '” (the name was taken).', 'success');
      openTrash();
      scheduleRefresh(0);
    } catch (e) { report(e, 'It could not be restored'); }
  }

  async function purgeTrashed(entry) {
    const answer = await confirmDialog({ title: 'Delete for good?', message: '“' + entry.path + '” will be gone from the trash and cannot be restored.', ok: 'Delete for good', danger: true });
    if (answer !== 'ok') return;
    try {
      await api('DELETE', '/api/trash/' + encodeURIComponent(entry.trashId));
      openTrash();
    } catch (e) { report(e, 'It could not be deleted'); }
  }

  function setupHistory() {
    $('#trash-button').addEventListener('click', () => openTrash());
    $('#trash-close').addEventListener('click', () => $('#trash').close());
    $('#versions-close').addEventListener('click', () => $('#versions').close());
    $('#preview-history').addEventListener('click', () => {
      if (!previewItem) return;
      openVersions(previewItem.path || joinPath(state.path, previewItem.name));
    });
    for (const id of ['#versions', '#trash']) {
      const dialog = $(id);
      dialog.addEventListener('close', () => restoreFocus(dialog));
    }
  }

  // ---------------------------------------------------------------- editor

  // A text editor for text documents, in the preview: it saves by itself a
  // moment after the last keystroke, always with If-Match (the version it
  // read or last wrote), so a save never overwrites what someone else wrote
  // meanwhile. It hears of their changes through the events; a collision
  // (412) shows both versions side by side to keep one or both.
  const EDITOR_QUIET_MS = 1200;
  let editor = null;

  // PUT of a text with its conditions (If-Match, If-None-Match: what keeps
  // it from overwriting someone else's save). Small texts are kept alive past
  // the page, so a last save on closing lands.
  // Its saves name their editing session (Fileshare-Edit-Session): the server keeps one version of
  // what the session replaced, not one per pause in the typing.
  function putText(path, text, conditions, session) {
    const headers = Object.assign({ 'Content-Type': 'text/plain; charset=utf-8' }, conditions);
    if (session) headers['Fileshare-Edit-Session'] = session;
    return fetch(serverURL(fileURL(path)), { method: 'PUT', body: text, headers, credentials: 'same-origin', keepalive: text.length < 60000 });
  }

  async function fetchText(path) {
    const response = await fetch(serverURL(fileURL(path)), { credentials: 'same-origin', cache: 'no-store' });
    if (await unauthorized(response)) throw new ApiError(401, STATUS_TEXT[401]);
    if (!response.ok) {
      let body = null;
      try { body = await response.json(); } catch (e) { body = null; }
      throw new ApiError(response.status, messageFor(response.status, body));
    }
    const bytes = new Uint8Array(await response.arrayBuffer());
    return { text: new TextDecoder('utf-8').decode(bytes), etag: response.headers.get('ETag') };
  }

  // A token for one editing session: random, from a source that works on plain HTTP too.
  function newSessionToken() {
    const bytes = new Uint8Array(16);
    crypto.getRandomValues(bytes);
    return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  }

  async function startEditor(item, path, body) {
    let loaded;
    try { loaded = await fetchText(path); } catch (e) { report(e, 'The editor could not open the file'); return; }
    if (previewItem !== item) return;
    const textarea = el('textarea', { id: 'editor-text', class: 'editor-text', spellcheck: 'false', 'aria-label': 'Text of ' + item.name });
    textarea.value = loaded.text;
    const status = el('span', { id: 'editor-status', class: 'editor-status', role: 'status', text: 'Saved' });
    const done = el('button', { type: 'button', id: 'editor-done', class: 'button', text: 'Done' });
    body.replaceChildren(el('div', { class: 'editor' }, el('div', { class: 'editor-bar' }, status, done), textarea));
    editor = { item, path, body, etag: loaded.etag, saved: loaded.text, textarea, status, timer: null, saving: null, conflict: null, session: newSessionToken() };
    textarea.addEventListener('input', editorEdited);
    done.addEventListener('click', async () => {
      await editorFlush();
      if (editor && !editor.conflict && previewItem === item) { closeEditor(); openPreview(item); }
    });
    textarea.focus();
  }

  function editorStatus(text, kind) {
    if (!editor) return;
    editor.status.textContent = text;
    editor.status.className = 'editor-status' + (kind ? ' ' + kind : '');
  }

  function editorDirty() { return editor && !editor.conflict && editor.textarea.value !== editor.saved; }

  function editorEdited() {
    if (!editor || editor.conflict) return;
    clearTimeout(editor.timer);
    if (!editorDirty()) { editorStatus('Saved'); return; }
    editorStatus('Unsaved changes');
    editor.timer = setTimeout(() => { editorSave(); }, EDITOR_QUIET_MS);
  }

  // Saves now if there is something to save (waiting for a save under way first).
  async function editorFlush() {
    if (!editor) return;
    clearTimeout(editor.timer);
    while (editor && editor.saving) await editor.saving;
    if (editorDirty()) await editorSave();
  }

  function editorSave() {
    const current = editor;
    if (!current || current.saving || current.conflict) return current && current.saving;
    const text = current.textarea.value;
    if (text === current.saved) return null;
    editorStatus('Saving…');
    current.saving = (async () => {
      try {
        const response = await putText(current.path, text, current.etag ? { 'If-Match': current.etag } : {}, current.session);
        if (await unauthorized(response)) return;
        if (response.status === 412) { await editorCollision(current, text); return; }
        if (!response.ok) {
          let body = null;
          try { body = await response.json(); } catch (e) { body = null; }
          throw new ApiError(response.status, messageFor(response.status, body));
        }
        current.saved = text;
        current.etag = response.headers.get('ETag') || current.etag;
        current.item.size = new Blob([text]).size;
        current.item.modified = new Date().toISOString();
        current.item.etag = current.etag;
        if (previewItem === current.item) showPreviewMeta(current.item);
        if (editor === current) editorStatus(current.textarea.value === text ? 'Saved' : 'Unsaved changes');
      } catch (e) {
        // The changes stay in the editor; the next keystroke (or Done) tries again.
        if (editor === current) editorStatus('Not saved: ' + e.message, 'error');
      } finally {
        current.saving = null;
      }
      if (editor === current && editorDirty()) editorEdited();
    })();
    return current.saving;
  }

  // Someone else saved since this editor read the file: show both.
  async function editorCollision(current, mine) {
    let theirs;
    try { theirs = await fetchText(current.path); } catch (e) { theirs = { text: '', etag: null, gone: true }; }
    if (editor !== current) return;
    current.conflict = { mine, theirs };
    editorStatus('Someone else changed this file while you were editing', 'warning');
    const mineArea = el('textarea', { id: 'conflict-mine', class: 'editor-text', readonly: true, 'aria-label': 'Your version' });
    mineArea.value = mine;
    const theirsArea = el('textarea', { id: 'conflict-theirs', class: 'editor-text', readonly: true, 'aria-label': 'Their version' });
    theirsArea.value = theirs.text;
    const view = el('div', { class: 'conflict', id: 'editor-conflict', role: 'group', 'aria-label': 'Two versions of ' + current.item.name },
      el('p', { class: 'conflict-note', text: theirs.gone ? 'The file was deleted or cannot be read by now. Keep your version to put it back.' : 'Your changes and theirs were both kept. Choose what the file should hold:' }),
      el('div', { class: 'conflict-sides' },
        el('section', { class: 'conflict-side' }, el('h3', { text: 'Your version' }), mineArea),
        el('section', { class: 'conflict-side' }, el('h3', { text: 'Their version (on the server now)' }), theirsArea)),
      el('div', { class: 'conflict-actions' },
        el('button', { type: 'button', id: 'conflict-keep-mine', class: 'button primary', text: 'Keep mine', onclick: () => resolveCollision(current, 'mine') }),
        el('button', { type: 'button', id: 'conflict-keep-theirs', class: 'button', text: 'Keep theirs', onclick: () => resolveCollision(current, 'theirs') }),
        theirs.gone ? null : el('button', { type: 'button', id: 'conflict-keep-both', class: 'button', text: 'Keep both', onclick: () => resolveCollision(current, 'both') })));
    current.textarea.hidden = true;
    current.textarea.after(view);
    $('#conflict-keep-mine').focus();
  }

  // A free name beside `path` for the other version: "notes (your version).txt", then numbered.
  async function freeSiblingName(path) {
    const dir = parentOf(path);
    const name = baseName(path);
    const dot = name.lastIndexOf('.');
    const stem = dot > 0 ? name.slice(0, dot) : name;
    const ext = dot > 0 ? name.slice(dot) : '';
    const listing = await api('GET', listURL(dir));
    const taken = new Set((listing.items || []).map((i) => i.name));
    for (let n = 1; ; n++) {
      const candidate = stem + (n === 1 ? ' (your version)' : ' (your version ' + n + ')') + ext;
      if (!taken.has(candidate)) return joinPath(dir, candidate);
    }
  }

  async function resolveCollision(current, keep) {
    if (editor !== current || !current.conflict) return;
    const { mine, theirs } = current.conflict;
    try {
      if (keep === 'both') {
        // Theirs stays the file; yours goes beside it, never over anything.
        const other = await freeSiblingName(current.path);
        const response = await putText(other, mine, { 'If-None-Match': '*' });
        if (!response.ok) throw new ApiError(response.status, messageFor(response.status, null));
        toast('Your version was saved as “' + baseName(other) + '”.', 'success');
      }
      if (keep === 'mine') {
        const response = await putText(current.path, mine, theirs.etag ? { 'If-Match': theirs.etag } : { 'If-None-Match': '*' }, current.session);
        if (response.status === 412) { current.conflict = null; $('#editor-conflict').remove(); current.textarea.hidden = false; await editorCollision(current, mine); return; }
        if (!response.ok) throw new ApiError(response.status, messageFor(response.status, null));
        current.saved = mine;
        current.etag = response.headers.get('ETag');
      } else {
        current.textarea.value = theirs.text;
        current.saved = theirs.text;
        current.etag = theirs.etag;
      }
      current.item.size = new Blob([current.saved]).size;
      current.conflict = null;
      $('#editor-conflict').remove();
      current.textarea.hidden = false;
      current.textarea.focus();
      editorStatus('Saved');
    } catch (e) {
      report(e, 'The versions could not be settled');
    }
  }

  // An event about the file being edited: someone else may have changed it.
  async function editorHeard(event) {
    const current = editor;
    if (!current || current.conflict) return;
    if ((event.type === 'renamed' || event.type === 'moved') && event.from === current.path) {
      current.path = event.to;
      editorStatus('Moved to “' + event.to + '” by someone else; saving there');
      return;
    }
    if (event.path !== current.path) return;
    if (event.type === 'removed') { editorStatus('Deleted by someone else; saving puts it back', 'warning'); current.etag = null; return; }
    if (!['modified', 'added', 'finished'].includes(event.type) || event.writing) return;
    while (current.saving) await current.saving;
    let response;
    try { response = await fetch(serverURL(fileURL(current.path)), { method: 'HEAD', credentials: 'same-origin', cache: 'no-store' }); } catch (e) { return; }
    const tag = response.ok ? response.headers.get('ETag') : null;
    if (editor !== current || !tag || tag === current.etag) return;   // our own save
    if (!editorDirty()) {
      const loaded = await fetchText(current.path).catch(() => null);
      if (!loaded || editor !== current || editorDirty()) return;
      current.textarea.value = loaded.text;
      current.saved = loaded.text;
      current.etag = loaded.etag;
      editorStatus('Updated: someone else changed this file', 'info');
    } else {
      editorStatus('Someone else changed this file; saving will show both versions', 'warning');
    }
  }

  function closeEditor() {
    const current = editor;
    if (!current) return;
    editor = null;
    clearTimeout(current.timer);
    // Closing never loses what was typed: a last save (kept alive past the page).
    if (!current.conflict && current.textarea.value !== current.saved && !current.saving) {
      putText(current.path, current.textarea.value, current.etag ? { 'If-Match': current.etag } : {}, current.session)
        .then((response) => { if (response.status === 412) toast('Someone else changed “' + current.item.name + '” meanwhile: your last edit was not saved over it. Open it again to compare.', 'error', 0); })
        .catch(() => toast('Your last edit of “' + current.item.name + '” could not be saved.', 'error', 0));
    }
  }

  function setupPreview() {
    const dialog = $('#preview');
    window.addEventListener('popstate', () => {
      if (previewPushed() || !dialog.open) return;
      previewInHistory = false; // Back took the step out already
      dialog.close();
    });
    $('#preview-close').addEventListener('click', () => dialog.close());
    $('#preview-prev').addEventListener('click', () => stepPreview(-1));
    $('#preview-next').addEventListener('click', () => stepPreview(1));
    dialog.addEventListener('close', () => {
      const item = previewItem;
      closePreviewContent();
      previewItem = null;
      if (previewInHistory) {
        previewInHistory = false;
        if (previewPushed()) history.back();
      }
      if (item && hooks.focusItem && hooks.focusItem(item)) dialog.returnFocus = null;
      else if (item && item.name && focusRow(item.name, false)) dialog.returnFocus = null;
      else restoreFocus(dialog);
    });
    dialog.addEventListener('keydown', (e) => {
      if (e.target.matches('video, audio, input, textarea')) return;
      if (e.key === 'ArrowLeft') { e.preventDefault(); stepPreview(-1); }
      else if (e.key === 'ArrowRight') { e.preventDefault(); stepPreview(1); }
    });
    // A click on the dark background (outside the content) closes the preview.
    dialog.addEventListener('click', (e) => {
      if (e.target === dialog || e.target === $('#preview-body')) dialog.close();
    });
    // Swipe left or right on a phone to go to the next or previous file.
    let touchX = null;
    let touchY = null;
    dialog.addEventListener('touchstart', (e) => {
      if (e.touches.length === 1) { touchX = e.touches[0].clientX; touchY = e.touches[0].clientY; }
    }, { passive: true });
    dialog.addEventListener('touchend', (e) => {
      if (touchX === null || !e.changedTouches.length) return;
      const dx = e.changedTouches[0].clientX - touchX;
      const dy = e.changedTouches[0].clientY - touchY;
      touchX = null;
      if (Math.abs(dx) > 60 && Math.abs(dx) > 2 * Math.abs(dy) && !$('#preview-body').classList.contains('zoomed')) stepPreview(dx < 0 ? 1 : -1);
    });
  }

  // ---------------------------------------------------------------- uploads

  const uploads = [];
  let uploadRender = 0;

  class Upload {
    constructor(file, path) {
      this.file = file;
      this.path = path;
      this.size = file.size;
      this.loaded = 0;
      this.offset = 0;
      this.state = 'queued';   // queued, uploading, retrying, paused, failed, done, cancelled
      this.error = '';
      this.token = null;       // resumable upload token
      this.needHead = false;
      this.attempt = 0;
      this.xhr = null;
      this.timer = 0;
      this.retryAt = 0;
      this.samples = [];
      this.result = '';
      this.resumable = file.size > state.info.resumableChunkBytes;
      this.li = null;
    }
  }

  function activeUploads() { return uploads.filter((u) => u.state === 'uploading'); }
  function busyUploads() { return uploads.filter((u) => ['queued', 'uploading', 'retrying'].includes(u.state)); }

  // Collect (file, relative path) pairs and upload them into `folder`.
  async function enqueue(entries, emptyFolders, folder) {
    if (state.info.readOnly) { toast('This share is read-only: uploads are turned off.'); return; }
    if (!entries.length && !emptyFolders.length) return;

    // Top-level files that would replace an existing file: ask first.
    // A fresh listing: the one on screen may not show a file that has just arrived.
    let existing;
    try { existing = (await api('GET', listURL(folder))).items || []; } catch (e) { existing = folder === state.path ? state.items : []; }
    const kinds = new Map(existing.map((i) => [i.name, i.kind]));
    // The version each file had when the person chose to replace it: the server
    // refuses (412) to replace one that changed since, instead of losing that change.
    const tags = new Map(existing.map((i) => [i.name, i.etag]));
    const clashes = entries.filter((entry) => !entry.rel.includes('/') && kinds.get(entry.rel) === 'file');
    if (clashes.length) {
      const names = clashes.slice(0, 3).map((c) => '“' + c.rel + '”').join(', ') + (clashes.length > 3 ? ' and ' + (clashes.length - 3) + ' more' : '');
      const answer = await confirmDialog({
        title: clashes.length === 1 ? 'Replace “' + clashes[0].rel + '”?' : 'Replace ' + clashes.length + ' files?',
        message: (clashes.length === 1 ? 'A file named ' + names + ' already exists' : names + ' already exist') + ' in “' + displayFolder(folder) + '”.',
        ok: 'Replace',
        extra: 'Keep both',
        cancel: 'Skip',
      });
      if (answer === null) {
        const skip = new Set(clashes);
        entries = entries.filter((entry) => !skip.has(entry));
      } else if (answer === 'ok') {
        for (const clash of clashes) clash.ifMatch = tags.get(clash.rel);
      } else if (answer === 'extra') {
        const taken = new Set(kinds.keys());
        for (const entry of entries) if (!entry.rel.includes('/')) taken.add(entry.rel);
        for (const clash of clashes) {
          clash.rel = uniqueName(clash.rel, taken);
          taken.add(clash.rel);
        }
      }
    }

    const limit = state.info.maxUploadBytes || 0;
    for (const dir of emptyFolders) {
      try {
        await api('POST', '/api/mkdir', { json: { path: joinPath(folder, dir) } });
      } catch (e) {
        if (e.status !== 409) report(e, 'Could not create the folder “' + dir + '”');
      }
    }
    if (emptyFolders.length) scheduleRefresh();

    for (const entry of entries) {
      const upload = new Upload(entry.file, joinPath(folder, entry.rel));
      upload.ifMatch = entry.ifMatch || null;
      uploads.push(upload);
      if (limit > 0 && upload.size > limit) {
        upload.state = 'failed';
        upload.fatal = true;
        upload.error = 'Too large: the server accepts files up to ' + formatSize(limit) + '.';
      }
      renderUpload(upload);
    }
    if (entries.length) showUploadPanel();
    pump();
  }

  function uniqueName(name, taken) {
    const dot = name.lastIndexOf('.');
    const stem = dot > 0 ? name.slice(0, dot) : name;
    const ext = dot > 0 ? name.slice(dot) : '';
    for (let n = 1; ; n++) {
      const candidate = stem + ' (' + n + ')' + ext;
      if (!taken.has(candidate)) return candidate;
    }
  }

  function pump() {
    let running = activeUploads().length;
    for (const upload of uploads) {
      if (running >= MAX_PARALLEL_UPLOADS) break;
      if (upload.state === 'queued') {
        running++;
        startUpload(upload);
      }
    }
    renderUploadSummary();
  }

  async function startUpload(upload) {
    upload.state = 'uploading';
    upload.error = '';
    upload.samples = [];
    upload.lastProgress = Date.now();
    renderUpload(upload);
    revealUpload(upload);
    try {
      if (upload.resumable) await resumableUpload(upload);
      else await simpleUpload(upload);
      upload.state = 'done';
      upload.loaded = upload.size;
      renderUpload(upload);
      uploadFinished(upload);
    } catch (e) {
      if (upload.state === 'cancelled' || upload.state === 'paused') {
        renderUpload(upload);
      } else if (isRetryable(e) && upload.attempt < MAX_RETRIES) {
        scheduleRetry(upload, e);
      } else {
        upload.state = 'failed';
        upload.error = e.message || String(e);
        // Retrying cannot help with these; a full disk or a lost connection may pass.
        upload.fatal = [400, 403, 409, 412, 413, 415].includes(e.status);
        if (upload.fatal && upload.token) discardToken(upload);
        renderUpload(upload);
        toast('“' + baseName(upload.path) + '” was not uploaded: ' + upload.error);
      }
    }
    pump();
  }

  function isRetryable(e) {
    return e && (e.status === 0 || e.status === 408 || e.status === 429 || e.status === 500 || e.status === 502 || e.status === 503 || e.status === 504 || e.retry === true);
  }

  function scheduleRetry(upload, error) {
    upload.attempt++;
    const delay = Math.min(30000, 1000 * Math.pow(2, upload.attempt - 1)) * (0.85 + Math.random() * 0.3);
    upload.state = 'retrying';
    upload.error = error.message;
    upload.retryAt = Date.now() + delay;
    upload.needHead = true;
    upload.timer = setTimeout(() => {
      upload.timer = 0;
      if (upload.state === 'retrying') startUpload(upload);
    }, delay);
    renderUpload(upload);
  }

  function uploadFinished(upload) {
    const folder = parentOf(upload.path);
    if (folder === state.path || isInside(folder, state.path)) scheduleRefresh(150);
    if (!busyUploads().length) {
      const done = uploads.filter((u) => u.state === 'done' && !u.announced);
      for (const u of done) u.announced = true;
      if (done.length > 1) toast(plural(done.length, 'file') + ' uploaded.', 'success');
      else if (done.length === 1) toast('“' + baseName(done[0].path) + '” uploaded.', 'success');
    }
  }

  // One HTTP request with upload progress; resolves for every HTTP answer,
  // rejects with status 0 on a network failure or a stall, and with AbortError when cancelled.
  function send(upload, method, url, body, headers, onProgress) {
    return new Promise((resolve, reject) => {
      const xhr = new XMLHttpRequest();
      upload.xhr = xhr;
      xhr.open(method, serverURL(url));
      for (const [name, value] of Object.entries(headers || {})) xhr.setRequestHeader(name, value);
      let stalled = false;
      const watchdog = setInterval(() => {
        if (Date.now() - upload.lastProgress > STALL_MS) { stalled = true; xhr.abort(); }
      }, 5000);
      upload.lastProgress = Date.now();
      if (onProgress) {
        xhr.upload.onprogress = (e) => { upload.lastProgress = Date.now(); onProgress(e.loaded); };
      }
      const done = () => { clearInterval(watchdog); if (upload.xhr === xhr) upload.xhr = null; };
      xhr.onload = () => {
        done();
        let json = null;
        try { json = xhr.responseText ? JSON.parse(xhr.responseText) : null; } catch (e) { json = null; }
        resolve({ status: xhr.status, json, header: (name) => xhr.getResponseHeader(name) });
      };
      xhr.onerror = () => { done(); reject(new ApiError(0, 'The connection to the server was lost.')); };
      xhr.ontimeout = xhr.onerror;
      xhr.onabort = () => {
        done();
        if (stalled) reject(new ApiError(0, 'The upload stalled.'));
        else { const e = new Error('Aborted'); e.name = 'AbortError'; reject(e); }
      };
      xhr.send(body === undefined ? null : body);
    });
  }

  function httpError(response) {
    if (response.status === 401 && response.json && response.json.signIn) signInAgain(response.json.signIn);
    return new ApiError(response.status, messageFor(response.status, response.json));
  }

  async function simpleUpload(upload) {
    upload.loaded = 0;
    const headers = { 'Content-Type': upload.file.type || 'application/octet-stream' };
    if (upload.ifMatch) headers['If-Match'] = upload.ifMatch;
    const response = await send(upload, 'PUT', fileURL(upload.path), upload.file, headers,
      (loaded) => progress(upload, loaded));
    if (response.status >= 200 && response.status < 300) { upload.result = response.status === 200 ? 'replaced' : 'new'; return; }
    throw httpError(response);
  }

  async function resumableUpload(upload) {
    const chunkSize = state.info.resumableChunkBytes;
    if (upload.token && upload.needHead) {
      const head = await send(upload, 'HEAD', '/api/uploads/' + encodeURIComponent(upload.token));
      if (head.status === 404 || head.status === 410) {
        upload.token = null; // expired on the server: start again
      } else if (head.status >= 200 && head.status < 300) {
        const offset = parseInt(head.header('Upload-Offset'), 10);
        if (isFinite(offset)) upload.offset = offset;
      } else {
        throw httpError(head);
      }
    }
    if (!upload.token) {
      upload.offset = 0;
      const headers = { 'Upload-Length': String(upload.size) };
      // Kept by the server and checked when the last chunk puts the file in place.
      if (upload.ifMatch) headers['If-Match'] = upload.ifMatch;
      const created = await send(upload, 'POST', '/api/uploads?path=' + encodeURIComponent(upload.path), null, headers);
      if (created.status !== 201 && created.status !== 200) throw httpError(created);
      if (!created.json || !created.json.upload) throw new ApiError(500, 'The server did not start the upload.');
      upload.token = created.json.upload;
      upload.offset = created.json.offset || 0;
    }
    upload.needHead = true; // from now on, a failure means asking the server where it stands
    progress(upload, upload.offset);
    let conflicts = 0;
    for (;;) {
      const start = upload.offset;
      const end = Math.min(upload.size, start + chunkSize);
      const response = await send(upload, 'PATCH', '/api/uploads/' + encodeURIComponent(upload.token), upload.file.slice(start, end),
        { 'Upload-Offset': String(start), 'Content-Type': 'application/offset+octet-stream' },
        (loaded) => progress(upload, start + loaded));
      if (response.status === 204) {
        const offset = parseInt(response.header('Upload-Offset'), 10);
        upload.offset = isFinite(offset) ? offset : end;
        upload.attempt = 0; // progress made: the retry budget starts again
        conflicts = 0;
        if (upload.offset >= upload.size && start === end) throw new ApiError(500, 'The server did not complete the upload.');
        continue;
      }
      if (response.status === 200 || response.status === 201) {
        upload.offset = upload.size;
        upload.token = null;
        upload.result = response.status === 200 ? 'replaced' : 'new';
        return;
      }
      if (response.status === 409) {
        const offset = parseInt(response.header('Upload-Offset'), 10);
        if (isFinite(offset) && conflicts++ < 3) { upload.offset = offset; continue; }
        if (!isFinite(offset)) {
          // Another request of this upload (an earlier try the server has not seen end) is still
          // writing: ask where it stands once that is over.
          const error = httpError(response);
          error.retry = true;
          throw error;
        }
      }
      if (response.status === 404 || response.status === 410) {
        upload.token = null;
        const error = new ApiError(response.status, 'The server forgot this upload; starting again.');
        error.retry = true;
        throw error;
      }
      throw httpError(response);
    }
  }

  function progress(upload, loaded) {
    const now = performance.now();
    upload.loaded = Math.min(loaded, upload.size);
    upload.samples.push([now, upload.loaded]);
    while (upload.samples.length > 2 && now - upload.samples[0][0] > 5000) upload.samples.shift();
    scheduleUploadRender();
  }

  function speedOf(upload) {
    const s = upload.samples;
    if (s.length < 2) return 0;
    const dt = (s[s.length - 1][0] - s[0][0]) / 1000;
    if (dt < 0.3) return 0;
    return Math.max(0, (s[s.length - 1][1] - s[0][1]) / dt);
  }

  function scheduleUploadRender() {
    if (uploadRender) return;
    uploadRender = requestAnimationFrame(() => {
      uploadRender = 0;
      for (const upload of uploads) if (upload.state === 'uploading') renderUploadProgress(upload);
      renderUploadSummary();
    });
  }

  function cancelUpload(upload) {
    if (['done', 'cancelled'].includes(upload.state)) return;
    upload.state = 'cancelled';
    clearTimeout(upload.timer);
    if (upload.xhr) upload.xhr.abort();
    if (upload.token) discardToken(upload);
    renderUpload(upload);
    pump();
  }

  function discardToken(upload) {
    const token = upload.token;
    upload.token = null;
    fetch(serverURL('/api/uploads/' + encodeURIComponent(token)), { method: 'DELETE', credentials: 'same-origin' }).catch(() => {});
  }

  function pauseUpload(upload) {
    if (!['uploading', 'retrying', 'queued'].includes(upload.state)) return;
    upload.state = 'paused';
    clearTimeout(upload.timer);
    upload.needHead = true;
    if (upload.xhr) upload.xhr.abort();
    renderUpload(upload);
    pump();
  }

  function resumeUpload(upload) {
    if (!['paused', 'failed', 'retrying'].includes(upload.state)) return;
    clearTimeout(upload.timer);
    upload.attempt = 0;
    upload.needHead = true;
    upload.state = 'queued';
    upload.error = '';
    renderUpload(upload);
    pump();
  }

  function dismissUpload(upload) {
    const index = uploads.indexOf(upload);
    if (index >= 0) uploads.splice(index, 1);
    if (upload.li) upload.li.remove();
    if (!uploads.length) $('#upload-panel').hidden = true;
    renderUploadSummary();
  }

  function renderUpload(upload) {
    if (!upload.li) {
      upload.li = el('li', { class: 'upload', dataset: { path: upload.path } },
        el('span', { class: 'upload-name', title: upload.path, text: upload.path }),
        el('span', { class: 'upload-buttons' }),
        el('progress', { class: 'upload-progress', max: '100', value: '0', 'aria-label': 'Upload of ' + upload.path }),
        el('span', { class: 'upload-status' }));
      $('#uploads').append(upload.li);
    }
    const li = upload.li;
    li.dataset.state = upload.state;
    const buttons = $('.upload-buttons', li);
    const list = [];
    const name = baseName(upload.path);
    if (upload.state === 'uploading' || upload.state === 'retrying' || upload.state === 'queued') {
      if (upload.resumable && upload.state !== 'queued') list.push(iconButton('pause', 'Pause ' + name, 'pause', () => pauseUpload(upload)));
      if (upload.state === 'retrying') list.push(iconButton('resume', 'Retry ' + name + ' now', 'resume', () => resumeUpload(upload)));
      list.push(iconButton('close', 'Cancel ' + name, 'cancel', () => cancelUpload(upload)));
    } else if (upload.state === 'paused' || upload.state === 'failed') {
      if (!upload.fatal) list.push(iconButton('resume', (upload.token ? 'Resume ' : 'Retry ') + name, 'resume', () => resumeUpload(upload)));
      list.push(iconButton('close', upload.state === 'paused' ? 'Cancel ' + name : 'Dismiss ' + name, upload.state === 'paused' ? 'cancel' : 'dismiss', () => {
        if (upload.state === 'paused' || upload.token) cancelUpload(upload);
        dismissUpload(upload);
      }));
    } else {
      list.push(iconButton('close', 'Remove ' + name + ' from the list', 'dismiss', () => dismissUpload(upload)));
    }
    buttons.replaceChildren(...list);
    renderUploadProgress(upload);
    renderUploadSummary();
  }

  // Keep the upload that has just started in view in the panel (unless the pointer is on it).
  function revealUpload(upload) {
    const list = $('#uploads');
    const li = upload.li;
    if (!li || list.matches(':hover')) return;
    const top = li.offsetTop - list.offsetTop;
    if (top < list.scrollTop || top + li.offsetHeight > list.scrollTop + list.clientHeight) list.scrollTop = top;
  }

  function renderUploadProgress(upload) {
    const li = upload.li;
    if (!li) return;
    const bar = $('.upload-progress', li);
    let fraction = upload.size ? upload.loaded / upload.size : (upload.state === 'done' ? 1 : 0);
    if (upload.fatal || upload.state === 'cancelled') fraction = 0;
    bar.value = Math.round(fraction * 1000) / 10;
    let text;
    switch (upload.state) {
      case 'queued': text = 'Waiting… · ' + formatSize(upload.size); break;
      case 'uploading': {
        const speed = speedOf(upload);
        text = formatSize(upload.loaded) + ' of ' + formatSize(upload.size);
        if (speed > 0) {
          text += ' · ' + formatSize(speed) + '/s';
          const left = (upload.size - upload.loaded) / speed;
          if (left > 0.5) text += ' · ' + formatDuration(left) + ' left';
        } else if (upload.loaded === 0) text += ' · starting…';
        break;
      }
      case 'retrying': {
        const wait = Math.max(0, Math.ceil((upload.retryAt - Date.now()) / 1000));
        text = (upload.error || 'Connection lost') + ' Retrying in ' + wait + ' s (attempt ' + upload.attempt + ' of ' + MAX_RETRIES + ')…';
        break;
      }
      case 'paused': text = 'Paused at ' + formatSize(upload.loaded) + ' of ' + formatSize(upload.size); break;
      case 'failed': text = 'Failed: ' + upload.error; break;
      case 'done': text = (upload.result === 'replaced' ? 'Replaced' : 'Uploaded') + ' · ' + formatSize(upload.size); break;
      case 'cancelled': text = 'Cancelled'; break;
      default: text = '';
    }
    const status = $('.upload-status', li);
    if (status.textContent !== text) status.textContent = text;
  }

  function renderUploadSummary() {
    const summary = $('#uploads-summary');
    if (!summary) return;
    const busy = busyUploads();
    const failed = uploads.filter((u) => u.state === 'failed').length;
    const done = uploads.filter((u) => u.state === 'done').length;
    let text;
    if (busy.length) {
      const total = busy.reduce((s, u) => s + u.size, 0);
      const loaded = busy.reduce((s, u) => s + u.loaded, 0);
      const speed = busy.reduce((s, u) => s + (u.state === 'uploading' ? speedOf(u) : 0), 0);
      text = busy.length + ' to go' + (total ? ' · ' + Math.floor((loaded / total) * 100) + '%' : '');
      if (speed > 0) text += ' · ' + formatDuration((total - loaded) / speed);
    } else {
      text = [done ? done + ' done' : '', failed ? failed + ' failed' : ''].filter(Boolean).join(', ') || '';
    }
    if (summary.textContent !== text) summary.textContent = text;
    $('#uploads-clear').hidden = !uploads.some((u) => u.state === 'done' || u.state === 'cancelled' || (u.state === 'failed' && u.fatal));
    document.body.classList.toggle('has-uploads', uploads.length > 0);
  }

  function showUploadPanel() {
    const panel = $('#upload-panel');
    panel.hidden = false;
    panel.classList.remove('collapsed');
    $('#uploads-toggle').setAttribute('aria-expanded', 'true');
  }

  // Reading dropped folders with the File and Directory Entries API.
  function readAllEntries(reader) {
    return new Promise((resolve, reject) => {
      const all = [];
      const next = () => reader.readEntries((batch) => {
        if (!batch.length) resolve(all);
        else { all.push(...batch); next(); }
      }, reject);
      next();
    });
  }

  async function walkEntry(entry, prefix, files, folders) {
    const rel = prefix + entry.name;
    if (entry.isFile) {
      const file = await new Promise((resolve, reject) => entry.file(resolve, reject));
      files.push({ file, rel });
    } else if (entry.isDirectory) {
      folders.push(rel);
      const children = await readAllEntries(entry.createReader());
      for (const child of children) await walkEntry(child, rel + '/', files, folders);
    }
  }

  async function filesFromDrop(dataTransfer) {
    const files = [];
    const folders = [];
    const entries = [];
    const plain = [];
    const items = dataTransfer.items ? Array.from(dataTransfer.items) : [];
    if (items.length && typeof items[0].webkitGetAsEntry === 'function') {
      // Every entry must be taken before the first await: the list empties afterwards.
      for (const item of items) {
        if (item.kind !== 'file') continue;
        const entry = item.webkitGetAsEntry();
        if (entry) entries.push(entry);
        else { const file = item.getAsFile(); if (file) plain.push(file); }
      }
    } else {
      plain.push(...Array.from(dataTransfer.files || []));
    }
    for (const file of plain) files.push({ file, rel: file.name });
    for (const entry of entries) {
      try {
        await walkEntry(entry, '', files, folders);
      } catch (e) {
        report(e, 'Could not read “' + entry.name + '”');
      }
    }
    return { files, emptyFolders: emptyFoldersOf(files, folders) };
  }

  // Folders that no uploaded file will create (PUT creates missing parents), parents first.
  function emptyFoldersOf(files, folders) {
    const needed = new Set();
    for (const { rel } of files) {
      let dir = parentOf(rel);
      while (dir) { needed.add(dir); dir = parentOf(dir); }
    }
    return folders.filter((f) => !needed.has(f)).sort((a, b) => a.split('/').length - b.split('/').length);
  }

  function filesFromInput(input) {
    const files = Array.from(input.files || []).map((file) => ({ file, rel: file.webkitRelativePath || file.name }));
    input.value = '';
    return files;
  }

  let dragDepth = 0;
  let internalDrag = null;
  let dropTargetNode = null;

  function isFileDrag(e) {
    const types = e.dataTransfer ? Array.from(e.dataTransfer.types || []) : [];
    return types.includes('Files') && !types.includes('application/x-fileshare-items') && !internalDrag;
  }

  function dropTargetFrom(e) {
    const node = e.target && e.target.closest ? e.target.closest('[data-drop-path]') : null;
    if (!node) return null;
    if (internalDrag && internalDrag.some((i) => isInside(node.dataset.dropPath, i.path || joinPath(state.path, i.name)))) return null;
    return node;
  }

  function setDropTarget(node) {
    if (dropTargetNode === node) return;
    clearDropTarget();
    dropTargetNode = node;
    if (node) node.classList.add('drop-target');
    const folder = node ? node.dataset.dropPath : state.path;
    $('#drop-text').textContent = 'Drop to upload to “' + displayFolder(folder) + '”';
  }

  function clearDropTarget() {
    if (dropTargetNode) dropTargetNode.classList.remove('drop-target');
    dropTargetNode = null;
  }

  function setupUploads() {
    const input = $('#upload-input');
    $('#upload-button').addEventListener('click', () => input.click());
    input.addEventListener('change', () => {
      const files = filesFromInput(input);
      if (files.length) enqueue(files, [], state.path);
    });
    const folderInput = $('#upload-folder-input');
    if (!('webkitdirectory' in folderInput)) $('#upload-folder-button').hidden = true;
    $('#upload-folder-button').addEventListener('click', () => folderInput.click());
    folderInput.addEventListener('change', () => {
      const files = filesFromInput(folderInput);
      if (files.length) enqueue(files, [], state.path);
    });

    $('#uploads-clear').addEventListener('click', () => {
      for (const upload of uploads.slice()) if (['done', 'cancelled'].includes(upload.state) || (upload.state === 'failed' && upload.fatal)) dismissUpload(upload);
    });
    $('#uploads-toggle').addEventListener('click', () => {
      const panel = $('#upload-panel');
      const collapsed = panel.classList.toggle('collapsed');
      const toggle = $('#uploads-toggle');
      toggle.setAttribute('aria-expanded', String(!collapsed));
      toggle.setAttribute('aria-label', collapsed ? 'Show the upload list' : 'Collapse the upload list');
    });
    // Count-down of the retry timers.
    setInterval(() => {
      for (const upload of uploads) if (upload.state === 'retrying') renderUploadProgress(upload);
    }, 1000);
    // Back online: retry at once.
    window.addEventListener('online', () => {
      for (const upload of uploads) {
        if (upload.state === 'retrying') { clearTimeout(upload.timer); startUpload(upload); }
      }
    });
    window.addEventListener('beforeunload', (e) => {
      if (busyUploads().length) { e.preventDefault(); e.returnValue = ''; }
    });

    document.addEventListener('dragenter', (e) => {
      if (internalDrag) return;
      if (!isFileDrag(e)) return;
      e.preventDefault();
      dragDepth++;
      $('#drop-overlay').hidden = false;
      setDropTarget(dropTargetFrom(e));
    });
    document.addEventListener('dragover', (e) => {
      if (internalDrag) {
        const target = dropTargetFrom(e);
        setDropTarget(target);
        if (target) { e.preventDefault(); e.dataTransfer.dropEffect = 'move'; }
        return;
      }
      if (!isFileDrag(e)) return;
      e.preventDefault();
      e.dataTransfer.dropEffect = state.info.readOnly ? 'none' : 'copy';
      setDropTarget(dropTargetFrom(e));
    });
    document.addEventListener('dragleave', (e) => {
      if (internalDrag) { if (!e.relatedTarget) clearDropTarget(); return; }
      if (!isFileDrag(e)) return;
      dragDepth = Math.max(0, dragDepth - 1);
      if (dragDepth === 0) { $('#drop-overlay').hidden = true; clearDropTarget(); }
    });
    document.addEventListener('drop', async (e) => {
      if (internalDrag) {
        const target = dropTargetFrom(e);
        const items = internalDrag;
        internalDrag = null;
        clearDropTarget();
        if (target) { e.preventDefault(); moveItems(items, target.dataset.dropPath); }
        return;
      }
      if (!isFileDrag(e)) return;
      e.preventDefault();
      dragDepth = 0;
      const target = dropTargetFrom(e);
      const folder = target ? target.dataset.dropPath : state.path;
      $('#drop-overlay').hidden = true;
      clearDropTarget();
      if (state.info.readOnly) { toast((readOnlyReason() || { text: 'Nothing can be added here.' }).text); return; }
      const { files, emptyFolders } = await filesFromDrop(e.dataTransfer);
      enqueue(files, emptyFolders, folder);
    });
  }

  // ---------------------------------------------------------------- live updates

  let events = null;
  let eventsRetry = 0;
  let eventsTimer = 0;
  let lostTimer = 0;
  let connectionLost = false;
  let unloading = false;

  function setConnectionLost(lost) {
    document.body.classList.toggle('offline', lost);
    $('#connection').hidden = !lost;
  }

  function markLost() {
    if (connectionLost || unloading) return;
    connectionLost = true;
    // A short grace period avoids a flash when the browser reconnects at once.
    clearTimeout(lostTimer);
    lostTimer = setTimeout(() => { if (connectionLost) setConnectionLost(true); }, 600);
  }

  function markRestored() {
    if (!connectionLost) return;
    connectionLost = false;
    clearTimeout(lostTimer);
    const wasShown = !$('#connection').hidden;
    setConnectionLost(false);
    if (wasShown) toast('Connection restored.', 'success', 2500);
    refreshInfo();
    scheduleRefresh(0); // changes made while we were away
  }

  let signedOut = false;

  // The session ended (expired, signed out elsewhere, the user removed):
  // nothing will work until the person signs in again, so stop trying
  // and say so, with the way to the sign-in form.
  function sessionEnded(signIn) {
    if (signedOut) return;
    signedOut = true;
    clearTimeout(eventsTimer);
    if (events) { events.close(); events = null; }
    connectionLost = false;
    clearTimeout(lostTimer);
    setConnectionLost(false);
    $('#session-signin').href = serverURL(signIn || '/signin');
    $('#session-ended').hidden = false;
    document.body.classList.add('offline');
  }

  // The event stream failed: an EventSource does not tell why, so ask the
  // API (a 401 there is the session's end; anything else, try again later).
  async function eventsFailed() {
    try {
      const response = await fetch(serverURL('/api/info'), { credentials: 'same-origin', headers: { Accept: 'application/json' } });
      if (response.status === 401) {
        let body = null;
        try { body = await response.json(); } catch (e) { body = null; }
        if (body && body.signIn) { sessionEnded(body.signIn); return true; }
      }
    } catch (e) {
      // The server cannot be reached: it may be restarting.
    }
    return false;
  }

  function connectEvents() {
    if (!window.EventSource || signedOut) return;
    clearTimeout(eventsTimer);
    if (events) events.close();
    const source = new EventSource(serverURL('/api/events'));
    events = source;
    source.onopen = () => {
      if (events !== source) return;
      eventsRetry = 0;
      markRestored();
    };
    source.onmessage = (message) => {
      let event;
      try { event = JSON.parse(message.data); } catch (e) { return; }
      if (event && typeof event === 'object') onChange(event);
    };
    source.onerror = () => {
      if (events !== source || unloading) return;
      markLost();
      if (source.readyState === EventSource.CLOSED) {
        // The browser gave up (the server answered with an error, such as
        // 401 for a session that ended): find out why, else try again ourselves.
        source.close();
        const delay = Math.min(15000, 1000 * Math.pow(2, eventsRetry++));
        eventsFailed().then((ended) => {
          if (!ended && events === source) eventsTimer = setTimeout(connectEvents, delay);
        });
      }
    };
  }

  function onChange(event) {
    if (editor) editorHeard(event);
    const here = state.path;
    if (here === null) return;
    const type = event.type;
    if (type === 'root-removed') {
      toast('The shared folder was removed on the server.');
      scheduleRefresh();
      return;
    }
    if (type === 'scan-completed') { scheduleRefresh(); return; }
    if ((type === 'renamed' || type === 'moved') && typeof event.from === 'string' && typeof event.to === 'string' && here && isInside(here, event.from)) {
      // The folder on screen (or one of its parents) got a new name: follow it.
      const newPath = event.to + here.slice(event.from.length);
      toast('This folder was ' + (type === 'renamed' ? 'renamed' : 'moved') + ' to “' + newPath + '”.', 'info');
      navigate(newPath, true);
      return;
    }
    if (type === 'removed' && typeof event.path === 'string' && here && isInside(here, event.path)) {
      scheduleRefresh();
      return;
    }
    if (type === 'rescanned' || type === 'degraded') {
      if (typeof event.path !== 'string' || isInside(here, event.path) || event.path === '' || parentOf(event.path) === here) scheduleRefresh();
      return;
    }
    const paths = [event.path, event.from, event.to, event.source].filter((p) => typeof p === 'string');
    for (const path of paths) {
      const parent = parentOf(path);
      // Directly inside the folder on screen, the folder itself, or inside one of its
      // subfolders (whose item count is shown).
      if (parent === here || path === here || (parent !== '' && parentOf(parent) === here && path.includes('/'))) {
        scheduleRefresh();
        return;
      }
    }
  }

  // ---------------------------------------------------------------- start

  function setupIcons() {
    for (const node of document.querySelectorAll('[data-icon]')) node.replaceChildren(icon(node.dataset.icon));
  }

  async function start() {
    setupIcons();
    if (!source.link) setupDialogs();
    setupList();
    if (!source.link) setupSelection();
    setupKeys();
    setupPreview();
    // A link changes nothing and hears of no change: no versions, trash, uploads or event stream.
    if (!source.link) {
      setupHistory();
      setupUploads();
    }
    loadSort();
    renderSortHeader();
    window.addEventListener('hashchange', onHashChange);
    if (narrow.addEventListener) narrow.addEventListener('change', () => { if (state.loaded) renderList(); });
    window.addEventListener('pagehide', () => { unloading = true; });
    window.addEventListener('pageshow', (e) => { unloading = false; if (e.persisted) checkSession(); });
    window.addEventListener('online', () => {
      if (events && events.readyState === EventSource.CLOSED) connectEvents();
      scheduleRefresh(0);
    });
    await refreshInfo();
    if (!source.link) connectEvents();
    await loadFolder(pathFromHash());
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
