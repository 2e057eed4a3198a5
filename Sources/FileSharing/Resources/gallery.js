// fileshare web page: the gallery view beside the list, a grid of thumbnails.
// Only the tiles on screen (and a screen's worth around them) are in the
// page, so a folder of 10,000 photos scrolls as smoothly as one of ten, and
// only the thumbnails that can be seen are asked for. The choice of view is
// remembered per folder (localStorage). Uses what app.js exposes as
// window.fileshare; app.js calls hooks.listRendered after drawing the list.
(function () {
  'use strict';

  const page = window.fileshare;
  if (!page) return;
  const { hooks, el, icon } = page;

  const STORAGE_PREFIX = 'fileshare.view:';
  const GAP = 12;
  const CAPTION = 40;   // the name under each tile, in pixels
  const OVERSCAN = 1;   // rows drawn above and below the screen

  const gallery = {
    on: false,
    path: null,
    items: [],
    columns: 1,
    tile: 160,
    focusIndex: 0,
    nodes: new Map(),   // item key -> li on the page
    frame: 0,
  };

  function itemKey(item) { return item.id ? 'id:' + item.id : 'name:' + item.name; }
  function itemPath(item) { return item.path || page.joinPath(page.state.path, item.name); }

  function stored(path) {
    try { return localStorage.getItem(STORAGE_PREFIX + path) === 'gallery'; } catch (e) { return false; }
  }
  function store(path, on) {
    try {
      if (on) localStorage.setItem(STORAGE_PREFIX + path, 'gallery');
      else localStorage.removeItem(STORAGE_PREFIX + path);
    } catch (e) { /* private mode: the choice lasts as long as the page */ }
  }

  // ---------------------------------------------------------------- the page's parts

  let toggle = null;
  let container = null;
  let grid = null;

  function setup() {
    toggle = el('button', { type: 'button', id: 'view-toggle', class: 'button', 'aria-pressed': 'false' });
    toggle.addEventListener('click', () => {
      setOn(!gallery.on);
      store(page.state.path, gallery.on);
      if (gallery.on) focusTile(gallery.focusIndex, false);
    });
    const toolbar = document.querySelector('.toolbar');
    const zip = document.getElementById('download-zip');
    if (toolbar) toolbar.insertBefore(toggle, zip && zip.parentNode === toolbar ? zip : null);
    grid = el('ul', { id: 'gallery-grid', class: 'gallery-grid', 'aria-labelledby': 'folder-title' });
    container = el('div', { id: 'gallery', class: 'gallery' }, grid);
    container.hidden = true;
    const list = document.getElementById('file-list');
    list.parentNode.insertBefore(container, list.nextSibling);
    renderToggle();

    grid.addEventListener('click', onClick);
    grid.addEventListener('keydown', onKey);
    grid.addEventListener('focusin', (e) => {
      const li = e.target.closest('li');
      if (li && li.dataset.index) gallery.focusIndex = Number(li.dataset.index);
    });
    window.addEventListener('scroll', schedule, { passive: true });
    window.addEventListener('resize', () => { layout(); schedule(); });
    if (window.ResizeObserver) new ResizeObserver(() => { if (gallery.on && layout()) schedule(); }).observe(container);
  }

  function renderToggle() {
    toggle.replaceChildren(icon(gallery.on ? 'text' : 'image'), el('span', { class: 'label', text: 'Gallery' }));
    toggle.setAttribute('aria-pressed', gallery.on ? 'true' : 'false');
    toggle.title = gallery.on ? 'Show the folder as a list' : 'Show the folder as a grid of pictures';
  }

  function setOn(on) {
    gallery.on = on;
    document.body.classList.toggle('gallery-mode', on);
    container.hidden = !on;
    renderToggle();
    if (on) {
      layout();
      draw();
    } else {
      grid.replaceChildren();
      gallery.nodes.clear();
    }
  }

  // ---------------------------------------------------------------- layout and drawing

  // Columns and tile size from the width; true when they changed.
  function layout() {
    const width = grid.clientWidth || container.clientWidth || window.innerWidth;
    const wanted = width < 560 ? 110 : 170;
    const columns = Math.max(1, Math.floor((width + GAP) / (wanted + GAP)));
    const tile = Math.floor((width - GAP * (columns - 1)) / columns);
    const changed = columns !== gallery.columns || tile !== gallery.tile;
    gallery.columns = columns;
    gallery.tile = tile;
    const rows = Math.ceil(gallery.items.length / columns);
    grid.style.height = Math.max(0, rows * (tile + CAPTION + GAP) - GAP) + 'px';
    return changed;
  }

  function schedule() {
    if (!gallery.on || gallery.frame) return;
    gallery.frame = requestAnimationFrame(() => { gallery.frame = 0; draw(); });
  }

  // The rows on screen, with OVERSCAN more on each side.
  function visibleRange() {
    const rowHeight = gallery.tile + CAPTION + GAP;
    const top = grid.getBoundingClientRect().top;
    const first = Math.max(0, Math.floor(-top / rowHeight) - OVERSCAN);
    const last = Math.floor((window.innerHeight - top) / rowHeight) + OVERSCAN;
    const count = gallery.items.length;
    return [Math.min(count, first * gallery.columns), Math.min(count, (last + 1) * gallery.columns)];
  }

  function draw() {
    if (!gallery.on) return;
    const [from, to] = visibleRange();
    const wanted = new Map();
    for (let i = from; i < to; i++) wanted.set(itemKey(gallery.items[i]), i);
    // The focused tile stays on the page, so the focus is never lost while scrolling.
    const focus = gallery.items[gallery.focusIndex];
    if (focus) wanted.set(itemKey(focus), gallery.focusIndex);
    for (const [key, li] of gallery.nodes) {
      if (!wanted.has(key)) {
        if (li.contains(document.activeElement)) continue;
        li.remove();
        gallery.nodes.delete(key);
      }
    }
    const fresh = [];
    for (const [key, index] of wanted) {
      const item = gallery.items[index];
      let li = gallery.nodes.get(key);
      if (!li || li.sig !== signature(item)) {
        if (li) li.remove();
        li = tile(item);
        gallery.nodes.set(key, li);
        fresh.push(li);
      }
      place(li, index);
    }
    if (fresh.length) grid.append(...fresh);
  }

  function signature(item) { return [item.name, item.size, item.modified, item.writing, item.path].join('\u0000'); }

  function place(li, index) {
    const column = index % gallery.columns;
    const row = Math.floor(index / gallery.columns);
    li.style.width = gallery.tile + 'px';
    li.style.transform = 'translate(' + column * (gallery.tile + GAP) + 'px,' + row * (gallery.tile + CAPTION + GAP) + 'px)';
    li.dataset.index = String(index);
    li.setAttribute('aria-posinset', String(index + 1));
    li.setAttribute('aria-setsize', String(gallery.items.length));
    const link = li.firstChild;
    link.tabIndex = index === gallery.focusIndex ? 0 : -1;
  }

  function tile(item) {
    const isFolder = item.kind === 'directory';
    const path = itemPath(item);
    const picture = el('span', { class: 'tile-picture' }, icon(page.iconFor(item)));
    picture.style.height = gallery.tile + 'px';
    const thumbnail = page.thumbnailURL(item);
    if (thumbnail) {
      // loading before src: an image given its src first starts loading at once, lazy or not.
      const img = el('img', { loading: 'lazy', decoding: 'async', src: thumbnail, alt: '', draggable: 'false' });
      img.addEventListener('load', () => picture.classList.add('has-thumb'));
      img.addEventListener('error', () => img.remove());
      picture.append(img);
    }
    const link = el('a', {
      class: 'tile',
      href: isFolder ? '#/' + page.encodePath(path) : page.openURL(path),
      title: item.name,
      draggable: 'false',
    }, picture, el('span', { class: 'tile-name', text: item.name }));
    if (isFolder) link.append(el('span', { class: 'visually-hidden', text: ', folder' }));
    const li = el('li', { class: 'gallery-item', dataset: { key: itemKey(item) } }, link);
    li.sig = signature(item);
    li.item = item;
    return li;
  }

  // ---------------------------------------------------------------- events

  function onClick(e) {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    const li = e.target.closest('li.gallery-item');
    if (!li) return;
    gallery.focusIndex = Number(li.dataset.index);
    if (li.item.kind === 'directory') return; // the link's #/path opens it
    e.preventDefault();
    page.openItem(li.item);
  }

  // Arrows move between tiles (up and down by a row), Home and End to the
  // ends, Page Up and Page Down by a screen; Enter opens (the link's own).
  function onKey(e) {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    const count = gallery.items.length;
    if (!count) return;
    const perScreen = gallery.columns * Math.max(1, Math.floor(window.innerHeight / (gallery.tile + CAPTION + GAP)));
    const moves = {
      ArrowLeft: -1, ArrowRight: 1, ArrowUp: -gallery.columns, ArrowDown: gallery.columns,
      PageUp: -perScreen, PageDown: perScreen, Home: -count, End: count,
    };
    if (!(e.key in moves)) return;
    e.preventDefault();
    const next = Math.max(0, Math.min(count - 1, gallery.focusIndex + moves[e.key]));
    focusTile(next, true);
  }

  function focusTile(index, scroll) {
    if (!gallery.items.length) return false;
    gallery.focusIndex = Math.max(0, Math.min(gallery.items.length - 1, index));
    if (scroll) {
      const rowHeight = gallery.tile + CAPTION + GAP;
      const top = grid.getBoundingClientRect().top + window.scrollY + Math.floor(gallery.focusIndex / gallery.columns) * rowHeight;
      if (top < window.scrollY) window.scrollTo(0, top - GAP);
      else if (top + rowHeight > window.scrollY + window.innerHeight) window.scrollTo(0, top + rowHeight - window.innerHeight + GAP);
    }
    draw();
    const li = gallery.nodes.get(itemKey(gallery.items[gallery.focusIndex]));
    if (li) li.firstChild.focus({ preventScroll: true });
    return !!li;
  }

  // ---------------------------------------------------------------- hooks

  // Before the list is drawn: a folder shown as a gallery hides the list
  // first, so its rows' thumbnails are never asked for.
  hooks.listWillRender = () => {
    if (!toggle) return;
    const path = page.state.path;
    if (path === gallery.path) return;
    gallery.path = path;
    gallery.items = [];
    gallery.focusIndex = 0;
    grid.replaceChildren();
    gallery.nodes.clear();
    setOn(stored(path));
  };

  hooks.listRendered = (items) => {
    if (!toggle) return;
    gallery.items = items;
    if (gallery.on) {
      gallery.focusIndex = Math.min(gallery.focusIndex, Math.max(0, items.length - 1));
      layout();
      draw();
    }
  };

  hooks.focusItem = (item) => {
    if (!gallery.on) return false;
    const index = gallery.items.findIndex((i) => itemKey(i) === itemKey(item));
    return index >= 0 && focusTile(index, true);
  };

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', setup);
  else setup();
})();
