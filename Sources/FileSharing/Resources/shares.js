// Share links: the page's "Share" action on each item and its "Links"
// dialog (POST/GET/DELETE /api/shares), and, on an upload link's page
// (/s/TOKEN), the drop zone that sends each file with PUT.
(function () {
  'use strict';

  function el(tag, attributes, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (name === 'text') node.textContent = value;
      else if (name.startsWith('on')) node.addEventListener(name.slice(2), value);
      else node.setAttribute(name, value === true ? '' : value);
    }
    for (const child of children) node.append(child);
    return node;
  }

  // The page's line icons (app.js), where this runs inside the page.
  function icon(name) {
    return window.fileshare && window.fileshare.icon ? window.fileshare.icon(name) : '';
  }

  function encodePath(path) {
    return path.split('/').map(encodeURIComponent).join('/');
  }

  // ------------------------------------------------------------ a link's drop zone

  function initDropZone(zone) {
    const base = zone.dataset.upload;
    const input = document.getElementById('drop-input');
    const results = document.getElementById('drop-results');
    async function send(file) {
      const row = el('li', { class: 'drop-result', text: file.name + ': sending…' });
      results.append(row);
      try {
        const response = await fetch(base + encodePath(file.name), { method: 'PUT', body: file, credentials: 'same-origin' });
        if (response.status === 201 || response.status === 200) {
          let placed = null;
          try { placed = await response.json(); } catch (e) { placed = null; }
          const kept = placed && placed.path ? placed.path.slice(placed.path.lastIndexOf('/') + 1) : file.name;
          // A name already there: both are kept, this one numbered.
          row.textContent = kept === file.name ? file.name + ': sent' : file.name + ': sent, kept as “' + kept + '” beside the one already there';
          row.dataset.outcome = 'sent';
        } else {
          let reason = response.status === 410 ? 'this link has ended' : 'refused (' + response.status + ')';
          try { const body = await response.json(); if (body.error) reason = body.error; } catch (e) { /* a page, not JSON */ }
          row.textContent = file.name + ': ' + reason;
          row.dataset.outcome = 'failed';
        }
      } catch (e) {
        row.textContent = file.name + ': the connection failed';
        row.dataset.outcome = 'failed';
      }
    }
    async function sendAll(files) {
      for (const file of files) await send(file);
    }
    input.addEventListener('change', () => { sendAll(Array.from(input.files)); input.value = ''; });
    zone.addEventListener('dragover', (e) => { e.preventDefault(); zone.classList.add('drag'); });
    zone.addEventListener('dragleave', () => zone.classList.remove('drag'));
    zone.addEventListener('drop', (e) => {
      e.preventDefault();
      zone.classList.remove('drag');
      sendAll(Array.from(e.dataTransfer.files));
    });
  }

  // ------------------------------------------------------------ the page: Share and Links

  async function call(method, url, body) {
    const response = await fetch(url, {
      method, credentials: 'same-origin',
      headers: body ? { 'Content-Type': 'application/json', Accept: 'application/json' } : { Accept: 'application/json' },
      body: body ? JSON.stringify(body) : undefined,
    });
    if (window.fileshare && await window.fileshare.unauthorized(response)) throw new Error('You are not signed in.');
    let json = null;
    try { json = await response.json(); } catch (e) { /* no body */ }
    if (!response.ok) throw new Error((json && json.error) || ('the server answered ' + response.status));
    return json;
  }

  function modal(id, title) {
    let dialog = document.getElementById(id);
    if (dialog) dialog.remove();
    dialog = el('dialog', { id, class: 'modal wide link-dialog', 'aria-labelledby': id + '-title' });
    dialog.append(el('h2', { id: id + '-title', text: title }));
    // Inside <main>, as the page's own dialogs: nothing it shows is outside a landmark.
    (document.querySelector('main') || document.body).append(dialog);
    dialog.addEventListener('close', () => dialog.remove());
    return dialog;
  }

  function open(dialog) {
    if (typeof dialog.showModal === 'function') dialog.showModal();
    else dialog.setAttribute('open', '');
  }

  function shareItem(item) {
    const path = item.path || item.name;
    const isFolder = item.kind === 'directory';
    const dialog = modal('share-dialog', 'Share “' + item.name + '”');
    const access = el('select', { id: 'share-access' },
      el('option', { value: 'read', text: isFolder ? 'Anyone with the link can see and download' : 'Anyone with the link can download' }));
    if (isFolder) access.append(el('option', { value: 'upload', text: 'Anyone with the link can add files (sees nothing)' }));
    const expires = el('select', { id: 'share-expires' },
      el('option', { value: '', text: 'Never' }), el('option', { value: 'PT1H', text: 'In an hour' }),
      el('option', { value: 'P1D', text: 'In a day' }), el('option', { value: 'P7D', text: 'In a week', selected: true }),
      el('option', { value: 'P30D', text: 'In 30 days' }));
    const password = el('input', { id: 'share-password', type: 'password', autocomplete: 'new-password' });
    const max = el('input', { id: 'share-max', type: 'number', min: '1', inputmode: 'numeric' });
    const error = el('p', { class: 'field-error', role: 'alert', hidden: true });
    const result = el('div', { id: 'share-result', hidden: true });
    const field = (label, control) => el('div', { class: 'field' }, el('label', { for: control.id, text: label }), control);
    const create = el('button', { type: 'submit', id: 'share-create', class: 'button primary', text: 'Create link' });
    const form = el('form', { method: 'dialog', class: 'share-form' },
      field('Who can do what', access), field('The link ends', expires),
      field('Password (optional)', password), field('Downloads at most (optional)', max),
      error, result,
      el('div', { class: 'dialog-buttons' },
        el('button', { type: 'button', class: 'button', onclick: () => dialog.close(), text: 'Close' }), create));
    let made = false;
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      // One link per dialog: a second click (or Enter) makes no second link.
      if (made || create.disabled) return;
      create.disabled = true;
      error.hidden = true;
      const body = { path, access: access.value };
      if (expires.value) body.expires = expires.value;
      if (password.value) body.password = password.value;
      if (max.value) body.maxDownloads = Number(max.value);
      try {
        const link = await call('POST', '/api/shares', body);
        made = true;
        const url = location.origin + link.url;
        const shown = el('input', { id: 'share-url', type: 'text', readonly: true, value: url, 'aria-label': 'The link' });
        result.replaceChildren(el('p', { text: 'The link (shown only now: copy it and send it):' }), shown,
          el('button', { type: 'button', class: 'button', text: 'Copy', onclick: () => { shown.select(); navigator.clipboard && navigator.clipboard.writeText(url); } }));
        result.hidden = false;
        create.hidden = true;
        for (const control of [access, expires, password, max]) control.disabled = true;
        shown.select();
      } catch (problem) {
        create.disabled = false;
        error.textContent = problem.message;
        error.hidden = false;
      }
    });
    dialog.append(form);
    open(dialog);
  }

  async function showLinks() {
    const dialog = modal('links-dialog', 'Links');
    const body = el('tbody');
    const headings = ['Item', 'Access', 'State', 'Downloads', 'Ends'];
    const table = el('table', { class: 'links-table' },
      el('thead', null, el('tr', null, ...headings.map((h) => el('th', { text: h })), el('th', null, el('span', { class: 'visually-hidden', text: 'Revoke' })))), body);
    // On a phone each link is a card: each value says what it is (data-label, shown by app.css).
    const cell = (i, text, extra) => el('td', Object.assign({ 'data-label': headings[i], text }, extra || {}));
    const words = { read: 'see and download', upload: 'add files', open: 'open', expired: 'expired', revoked: 'revoked', 'used-up': 'used up', deleted: 'item deleted' };
    const error = el('p', { class: 'field-error', role: 'alert', hidden: true });
    dialog.append(table, error,
      el('div', { class: 'dialog-buttons' }, el('button', { type: 'button', class: 'button', onclick: () => dialog.close(), text: 'Close' })));
    async function load() {
      try {
        const { links } = await call('GET', '/api/shares');
        body.replaceChildren(...links.map((link) => el('tr', { 'data-link': link.id, 'data-state': link.state },
          cell(0, '/' + link.path), cell(1, words[link.access] || link.access), cell(2, words[link.state] || link.state, { class: 'link-state' }),
          cell(3, String(link.downloads) + (link.maxDownloads ? ' of ' + link.maxDownloads : '')),
          cell(4, link.expires ? new Date(link.expires).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' }) : 'never'),
          el('td', null, link.state === 'open'
            ? el('button', { type: 'button', class: 'button small link-revoke', 'aria-label': 'Revoke the link to ' + link.path, text: 'Revoke',
              onclick: async () => {
                try { await call('DELETE', '/api/shares/' + encodeURIComponent(link.id)); load(); }
                catch (problem) { error.textContent = problem.message; error.hidden = false; }
              } })
            : ''))));
        if (!links.length) body.append(el('tr', null, el('td', { colspan: '6', text: 'No links yet.' })));
      } catch (problem) {
        error.textContent = problem.message;
        error.hidden = false;
      }
    }
    await load();
    open(dialog);
  }

  function decorate(li) {
    if (!li.item || li.querySelector('[data-role="share"]')) return;
    const kind = li.item.kind;
    if (kind !== 'file' && kind !== 'directory') return;
    const actions = li.querySelector('.actions');
    if (!actions) return;
    const button = el('button', { type: 'button', class: 'icon-button share', title: 'Share', 'aria-label': 'Share ' + li.item.name, 'data-role': 'share' }, icon('link'));
    button.addEventListener('click', (e) => {
      e.stopPropagation();
      e.preventDefault();
      shareItem(li.item);
    });
    actions.prepend(button);
  }

  function initPage(list) {
    for (const li of list.children) decorate(li);
    new MutationObserver(() => { for (const li of list.children) decorate(li); }).observe(list, { childList: true });
    const toolbar = document.querySelector('.toolbar');
    if (toolbar && !document.getElementById('links-button')) {
      toolbar.append(el('button', { type: 'button', id: 'links-button', class: 'button', onclick: showLinks },
        el('span', { 'aria-hidden': 'true' }, icon('link')), el('span', { class: 'label', text: 'Links' })));
    }
  }

  // ------------------------------------------------------------ when a link ends

  // The server knows no visitor's time zone: it writes the moment, and the
  // browser says it in the visitor's own time and words.
  function showLocalTimes() {
    for (const time of document.querySelectorAll('time[data-until]')) {
      const when = new Date(time.getAttribute('datetime'));
      if (isNaN(when)) continue;
      time.title = time.textContent;
      time.textContent = 'open until ' + when.toLocaleString(undefined, {
        weekday: 'short', day: 'numeric', month: 'long', hour: 'numeric', minute: '2-digit', timeZoneName: 'short'
      });
    }
  }

  function start() {
    showLocalTimes();
    const zone = document.getElementById('drop-zone');
    if (zone) { initDropZone(zone); return; }
    const list = document.getElementById('file-list');
    if (list) initPage(list);
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
