// fileshare web page: what the viewer (app.js's preview) shows beyond the
// browser's own — Markdown, rendered safely, and comics (CBZ), read page by
// page from the ZIP by HTTP range. Uses what app.js exposes as
// window.fileshare; app.js calls hooks.preview(item, body) first.
(function () {
  'use strict';

  const page = window.fileshare;
  if (!page) return;
  const { hooks, el, icon } = page;

  const MiB = 1024 * 1024;
  const MARKDOWN_BYTES = MiB;
  const MAX_DIRECTORY_BYTES = 16 * MiB;   // a comic's central directory, at most
  const MAX_PAGE_BYTES = 64 * MiB;        // one page, inflated, at most
  const PRELOAD = 2;                      // pages read ahead of the one shown
  const KEEP = 6;                         // pages kept decoded around the one shown

  function itemPath(item) { return item.path || page.joinPath(page.state.path, item.name); }

  // ---------------------------------------------------------------- reading by range

  class ReadError extends Error {}

  // The bytes first..last (inclusive) of the file at url.
  async function readRange(url, first, last, signal) {
    const response = await fetch(page.serverURL(url), {
      headers: { Range: 'bytes=' + first + '-' + last }, credentials: 'same-origin', signal,
    });
    if (response.status === 401 && await page.unauthorized(response)) throw new ReadError('signing in again');
    if (response.status === 416) return new Uint8Array(0); // an empty file
    if (response.status !== 206 && response.status !== 200) throw new ReadError('the server answered ' + response.status);
    const bytes = new Uint8Array(await response.arrayBuffer());
    // A server that ignores ranges sends the whole file.
    if (response.status === 200) return bytes.subarray(first, last + 1);
    return bytes;
  }

  // ---------------------------------------------------------------- Markdown

  // A small Markdown renderer that builds DOM nodes and never parses HTML:
  // headings, paragraphs, lists, block quotes, code (fenced and inline),
  // emphasis, links and rules. Raw HTML in the file is shown as text; a
  // link is made only for http:, https:, mailto: and relative addresses
  // (anything else, javascript: above all, is left as plain text).
  const Markdown = {
    render(text, resolve) {
      const fragment = document.createDocumentFragment();
      Markdown.blocks(text.replace(/\r\n?/g, '\n').split('\n'), fragment, resolve, 0);
      return fragment;
    },

    blocks(lines, parent, resolve, depth) {
      const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)/;
      const HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
      const RULE = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
      const QUOTE = /^ {0,3}> ?/;
      const ITEM = /^( {0,3})([-*+]|\d{1,9}[.)])(?:[ \t]+|$)(.*)$/;
      const startsBlock = (line) => FENCE.test(line) || HEADING.test(line) || RULE.test(line) || QUOTE.test(line) || ITEM.test(line);
      let i = 0;
      while (i < lines.length) {
        const line = lines[i];
        if (!line.trim()) { i++; continue; }
        let match;
        if ((match = FENCE.exec(line))) {
          const fence = match[1];
          const body = [];
          i++;
          while (i < lines.length && !(lines[i].trim().startsWith(fence[0].repeat(fence.length)) && lines[i].trim().replace(new RegExp('^\\' + fence[0] + '+'), '').trim() === '')) {
            body.push(lines[i]);
            i++;
          }
          i++; // the closing fence (or the end)
          const code = el('code', { text: body.join('\n') });
          if (match[2]) code.dataset.language = match[2];
          parent.append(el('pre', null, code));
        } else if ((match = HEADING.exec(line))) {
          const heading = el('h' + match[1].length);
          Markdown.inline(match[2] || '', heading, resolve);
          parent.append(heading);
          i++;
        } else if (RULE.test(line)) {
          parent.append(el('hr'));
          i++;
        } else if (QUOTE.test(line)) {
          const inner = [];
          while (i < lines.length && lines[i].trim() && QUOTE.test(lines[i])) { inner.push(lines[i].replace(QUOTE, '')); i++; }
          const quote = el('blockquote');
          if (depth < 16) Markdown.blocks(inner, quote, resolve, depth + 1);
          else quote.textContent = inner.join('\n');
          parent.append(quote);
        } else if ((match = ITEM.exec(line))) {
          const ordered = /\d/.test(match[2]);
          const list = el(ordered ? 'ol' : 'ul');
          if (ordered && parseInt(match[2], 10) !== 1) list.setAttribute('start', String(parseInt(match[2], 10)));
          while (i < lines.length && (match = ITEM.exec(lines[i])) && /\d/.test(match[2]) === ordered) {
            const indent = match[1].length + match[2].length + 1;
            const content = [match[3]];
            i++;
            // The item's further lines: indented, or a paragraph's continuation.
            while (i < lines.length) {
              const next = lines[i];
              if (!next.trim()) {
                if (i + 1 < lines.length && /^\s{2,}\S/.test(lines[i + 1])) { content.push(''); i++; continue; }
                break;
              }
              if (/^\s{2,}/.test(next)) { content.push(next.replace(new RegExp('^ {0,' + indent + '}'), '').replace(/^\t/, '')); i++; continue; }
              if (ITEM.test(next) || startsBlock(next)) break;
              content.push(next);
              i++;
            }
            const li = el('li');
            if (depth < 16) Markdown.blocks(content, li, resolve, depth + 1);
            else li.textContent = content.join('\n');
            // A tight item is its text, not a paragraph.
            if (li.childNodes.length === 1 && li.firstChild.nodeName === 'P') li.replaceChildren(...li.firstChild.childNodes);
            list.append(li);
          }
          parent.append(list);
        } else {
          const text = [];
          while (i < lines.length && lines[i].trim() && !(text.length && startsBlock(lines[i]))) { text.push(lines[i].trim()); i++; }
          const paragraph = el('p');
          Markdown.inline(text.join('\n'), paragraph, resolve);
          parent.append(paragraph);
        }
      }
    },

    // Inline text into parent: code spans, links, emphasis, escapes; the rest as text.
    inline(text, parent, resolve, depth) {
      depth = depth || 0;
      let plain = '';
      const flush = () => { if (plain) { parent.append(document.createTextNode(plain)); plain = ''; } };
      let i = 0;
      while (i < text.length) {
        const c = text[i];
        if (c === '\\' && i + 1 < text.length && /[!-/:-@[-`{-~]/.test(text[i + 1])) {
          plain += text[i + 1];
          i += 2;
          continue;
        }
        if (c === '\\' && text[i + 1] === '\n') {
          flush();
          parent.append(el('br'));
          i += 2;
          continue;
        }
        if (c === '`') {
          let run = 1;
          while (text[i + run] === '`') run++;
          const ticks = '`'.repeat(run);
          let end = text.indexOf(ticks, i + run);
          while (end >= 0 && text[end + run] === '`') end = text.indexOf(ticks, end + run + 1);
          if (end >= 0) {
            flush();
            let code = text.slice(i + run, end).replace(/\n/g, ' ');
            if (/^ .* $/.test(code) && code.trim()) code = code.slice(1, -1);
            parent.append(el('code', { text: code }));
            i = end + run;
            continue;
          }
          plain += ticks;
          i += run;
          continue;
        }
        if (c === '<') {
          const auto = /^<((?:https?:\/\/|mailto:)[^\s<>]+)>/i.exec(text.slice(i));
          if (auto) {
            flush();
            parent.append(Markdown.link(auto[1], resolve, (a) => a.append(document.createTextNode(auto[1]))));
            i += auto[0].length;
            continue;
          }
        }
        if (c === '[' || (c === '!' && text[i + 1] === '[')) {
          const image = c === '!';
          const open = image ? i + 1 : i;
          const close = Markdown.closing(text, open);
          if (close > 0 && text[close + 1] === '(') {
            const end = Markdown.closingParen(text, close + 1);
            if (end > 0) {
              const label = text.slice(open + 1, close);
              const target = text.slice(close + 2, end).trim().replace(/^<(.*)>$/, '$1').split(/\s+["'(]/)[0];
              flush();
              parent.append(Markdown.link(target, resolve, (a) => {
                // An image is shown as a link to it: nothing is fetched from elsewhere to show a file.
                if (image) a.append(document.createTextNode(label || target));
                else if (depth < 8) Markdown.inline(label, a, resolve, depth + 1);
                else a.append(document.createTextNode(label));
              }));
              i = end + 1;
              continue;
            }
          }
        }
        if (c === '*' || c === '_') {
          let run = 1;
          while (text[i + run] === c) run++;
          const size = Math.min(run, 2);
          const marker = c.repeat(size);
          const after = text[i + size];
          const before = i > 0 ? text[i - 1] : ' ';
          // Opens before a non-space; "_" not inside a word (snake_case stays as it is).
          if (after && !/\s/.test(after) && !(c === '_' && /\w/.test(before))) {
            let end = i + size;
            while ((end = text.indexOf(marker, end)) >= 0) {
              const prev = text[end - 1];
              const next = text[end + size];
              if (end > i + size && !/\s/.test(prev) && !(c === '_' && next && /\w/.test(next)) && (size === 2 || text[end + 1] !== c || text[end + 2] === c)) break;
              end += size;
            }
            if (end > i + size) {
              flush();
              const node = el(size === 2 ? 'strong' : 'em');
              if (depth < 8) Markdown.inline(text.slice(i + size, end), node, resolve, depth + 1);
              else node.textContent = text.slice(i + size, end);
              parent.append(node);
              i = end + size;
              continue;
            }
          }
          plain += c.repeat(run);
          i += run;
          continue;
        }
        plain += c;
        i++;
      }
      flush();
    },

    // The index of the "]" closing the "[" at open, or -1.
    closing(text, open) {
      let level = 0;
      for (let i = open; i < text.length; i++) {
        if (text[i] === '\\') { i++; continue; }
        if (text[i] === '[') level++;
        else if (text[i] === ']' && --level === 0) return i;
      }
      return -1;
    },

    closingParen(text, open) {
      let level = 0;
      for (let i = open; i < text.length; i++) {
        if (text[i] === '\\') { i++; continue; }
        if (text[i] === '(') level++;
        else if (text[i] === ')' && --level === 0) return i;
        else if (text[i] === '\n' && text[i + 1] === '\n') return -1;
      }
      return -1;
    },

    // A link to target when its address is safe, else the label as plain text.
    link(target, resolve, fill) {
      const href = Markdown.safeHref(target, resolve);
      const node = href === null ? el('span', { class: 'unsafe-link' }) : el('a', { href });
      if (href !== null && /^(https?:|mailto:|\/\/)/i.test(href)) {
        node.setAttribute('rel', 'noopener noreferrer nofollow');
        node.setAttribute('target', '_blank');
      }
      fill(node);
      return node;
    },

    // http:, https:, mailto:, a fragment or a path relative to the file; null otherwise.
    safeHref(target, resolve) {
      // Browsers drop tabs and line breaks from addresses ("java\tscript:"): so does the check.
      const raw = String(target).replace(/[\u0000-\u0020\u007f-\u009f]/g, '');
      if (!raw) return null;
      const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(raw);
      if (scheme) return ['http', 'https', 'mailto'].includes(scheme[1].toLowerCase()) ? raw : null;
      if (raw.startsWith('#') || raw.startsWith('//') || raw.startsWith('/')) return raw;
      return resolve ? resolve(raw) : null;
    },
  };

  async function showMarkdown(item, body) {
    const path = itemPath(item);
    const folder = page.parentOf(path);
    const controller = new AbortController();
    const article = el('article', { class: 'markdown', tabindex: '0', 'aria-label': item.name, text: 'Loading…' });
    const source = el('button', { type: 'button', class: 'button', id: 'markdown-source' }, 'Show the source');
    source.addEventListener('click', () => {
      controller.abort();
      body.replaceChildren();
      page.showText(item, body);
    });
    const column = el('div', { class: 'viewer-column' }, el('div', { class: 'viewer-bar' }, source), article);
    body.append(column);
    try {
      const bytes = await readRange(page.fileURL(path), 0, MARKDOWN_BYTES - 1, controller.signal);
      if (!column.isConnected) return;
      const text = new TextDecoder('utf-8').decode(bytes.subarray(0, MARKDOWN_BYTES));
      // Relative links lead to the files beside this one.
      const resolve = (relative) => {
        const [pathPart, fragment] = relative.split('#', 2);
        const parts = [];
        for (const part of (folder ? folder.split('/') : []).concat(pathPart.split('/'))) {
          if (part === '..') parts.pop();
          else if (part && part !== '.') parts.push(decodeURIComponentSafe(part));
        }
        return page.fileURL(parts.join('/')) + (fragment ? '#' + fragment : '');
      };
      article.replaceChildren(Markdown.render(text, resolve));
      if (typeof item.size === 'number' && item.size > bytes.length) {
        column.append(el('p', { class: 'preview-note', text: 'Showing the first ' + page.formatSize(bytes.length) + ' of ' + page.formatSize(item.size) + '.' }));
      }
    } catch (e) {
      if (e.name === 'AbortError' || !column.isConnected) return;
      article.textContent = 'The file could not be loaded: ' + e.message;
    }
  }

  function decodeURIComponentSafe(text) {
    try { return decodeURIComponent(text); } catch (e) { return text; }
  }

  // ---------------------------------------------------------------- comics (CBZ)

  const PAGE_TYPES = { jpg: 'image/jpeg', jpeg: 'image/jpeg', png: 'image/png', gif: 'image/gif', webp: 'image/webp', avif: 'image/avif', bmp: 'image/bmp' };

  // The ZIP's entries, from its central directory, read by range: the end
  // of the file first (the end record, and often the whole directory).
  async function zipEntries(url, size, signal) {
    const tailLength = Math.min(size, 65536 + 22 + 20);
    const tail = await readRange(url, size - tailLength, size - 1, signal);
    const view = new DataView(tail.buffer, tail.byteOffset, tail.byteLength);
    let end = -1;
    for (let i = tail.length - 22; i >= 0; i--) if (view.getUint32(i, true) === 0x06054b50) { end = i; break; }
    if (end < 0) throw new ReadError('this is not a ZIP archive (no end record)');
    let count = view.getUint16(end + 10, true);
    let directorySize = view.getUint32(end + 12, true);
    let directoryOffset = view.getUint32(end + 16, true);
    if (count === 0xffff || directorySize === 0xffffffff || directoryOffset === 0xffffffff) {
      // ZIP64: the locator just before the end record says where its end record is.
      if (end < 20 || view.getUint32(end - 20, true) !== 0x07064b50) throw new ReadError('a ZIP64 archive without its locator');
      const at = Number(view.getBigUint64(end - 20 + 8, true));
      const record = await readRange(url, at, at + 55, signal);
      const r = new DataView(record.buffer, record.byteOffset, record.byteLength);
      if (r.getUint32(0, true) !== 0x06064b50) throw new ReadError('a damaged ZIP64 end record');
      count = Number(r.getBigUint64(32, true));
      directorySize = Number(r.getBigUint64(40, true));
      directoryOffset = Number(r.getBigUint64(48, true));
    }
    if (directorySize > MAX_DIRECTORY_BYTES || directoryOffset + directorySize > size) throw new ReadError('the archive\'s directory is damaged or too large');
    const tailStart = size - tailLength;
    const directory = directoryOffset >= tailStart
      ? tail.subarray(directoryOffset - tailStart, directoryOffset - tailStart + directorySize)
      : await readRange(url, directoryOffset, directoryOffset + directorySize - 1, signal);
    const d = new DataView(directory.buffer, directory.byteOffset, directory.byteLength);
    const decoder = new TextDecoder('utf-8');
    const entries = [];
    let p = 0;
    for (let n = 0; n < count && p + 46 <= directory.length; n++) {
      if (d.getUint32(p, true) !== 0x02014b50) break;
      const flags = d.getUint16(p + 8, true);
      const method = d.getUint16(p + 10, true);
      let compressed = d.getUint32(p + 20, true);
      let uncompressed = d.getUint32(p + 24, true);
      const nameLength = d.getUint16(p + 28, true);
      const extraLength = d.getUint16(p + 30, true);
      const commentLength = d.getUint16(p + 32, true);
      let offset = d.getUint32(p + 42, true);
      const name = decoder.decode(directory.subarray(p + 46, p + 46 + nameLength));
      // ZIP64 sizes and offset, in the extra field, for those marked 0xffffffff (in this order).
      let e = p + 46 + nameLength;
      const extraEnd = Math.min(e + extraLength, directory.length);
      while (e + 4 <= extraEnd) {
        const id = d.getUint16(e, true);
        const length = d.getUint16(e + 2, true);
        if (id === 0x0001) {
          let q = e + 4;
          if (uncompressed === 0xffffffff && q + 8 <= extraEnd) { uncompressed = Number(d.getBigUint64(q, true)); q += 8; }
          if (compressed === 0xffffffff && q + 8 <= extraEnd) { compressed = Number(d.getBigUint64(q, true)); q += 8; }
          if (offset === 0xffffffff && q + 8 <= extraEnd) { offset = Number(d.getBigUint64(q, true)); q += 8; }
        }
        e += 4 + length;
      }
      entries.push({ name, method, encrypted: (flags & 1) !== 0, compressed, uncompressed, offset });
      p += 46 + nameLength + extraLength + commentLength;
    }
    return entries;
  }

  // The pages: images, in natural name order ("page2" before "page10").
  function comicPages(entries) {
    return entries.filter((entry) => {
      const name = entry.name;
      if (name.endsWith('/') || name.startsWith('__MACOSX/')) return false;
      const base = name.slice(name.lastIndexOf('/') + 1);
      if (base.startsWith('.')) return false;
      return PAGE_TYPES[page.extension(base)] !== undefined;
    }).sort((a, b) => page.collator.compare(a.name, b.name) || (a.name < b.name ? -1 : 1));
  }

  // One page's bytes, as a blob of its image type: its local header and data in one range read.
  async function readPage(url, size, entry, signal) {
    if (entry.encrypted) throw new ReadError('the page is encrypted');
    if (entry.method !== 0 && entry.method !== 8) throw new ReadError('the page is compressed in a way the browser cannot read');
    if (entry.uncompressed > MAX_PAGE_BYTES || entry.compressed > MAX_PAGE_BYTES) throw new ReadError('the page is too large');
    const guess = 30 + 4096 + entry.compressed;
    let bytes = await readRange(url, entry.offset, Math.min(size, entry.offset + guess) - 1, signal);
    const header = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (bytes.length < 30 || header.getUint32(0, true) !== 0x04034b50) throw new ReadError('a damaged page entry');
    const start = 30 + header.getUint16(26, true) + header.getUint16(28, true);
    if (start + entry.compressed > bytes.length) {
      bytes = await readRange(url, entry.offset + start, entry.offset + start + entry.compressed - 1, signal);
    } else {
      bytes = bytes.subarray(start, start + entry.compressed);
    }
    const type = PAGE_TYPES[page.extension(entry.name)];
    if (entry.method === 0) return new Blob([bytes], { type });
    // Inflated by the browser, and never past the bound, whatever the entry claims.
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('deflate-raw'));
    const reader = stream.getReader();
    const parts = [];
    let total = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.length;
      if (total > MAX_PAGE_BYTES) { reader.cancel().catch(() => {}); throw new ReadError('the page inflates past its bound'); }
      parts.push(value);
    }
    return new Blob(parts, { type });
  }

  // The reader on screen (one at most): its keys and swipes come before the viewer's.
  let reader = null;

  async function showComic(item, body) {
    const path = itemPath(item);
    const url = page.fileURL(path);
    const controller = new AbortController();
    const image = el('img', { alt: '' });
    const status = el('span', { class: 'comic-status', 'aria-live': 'polite', text: 'Opening…' });
    const previous = el('button', { type: 'button', class: 'button', id: 'comic-previous', 'aria-label': 'Previous page' }, icon('chevron-left'), el('span', { class: 'label', text: 'Previous page' }));
    const next = el('button', { type: 'button', class: 'button', id: 'comic-next', 'aria-label': 'Next page' }, el('span', { class: 'label', text: 'Next page' }), icon('chevron-right'));
    const root = el('div', { class: 'comic', role: 'group', 'aria-label': item.name },
      el('div', { class: 'comic-page' }, image),
      el('div', { class: 'comic-controls' }, previous, status, next));
    body.append(root);
    const state = { item, root, pages: [], index: 0, cache: new Map(), controller };
    reader = state;

    const load = (index) => {
      if (!state.cache.has(index)) {
        const promise = readPage(url, item.size, state.pages[index], controller.signal).then((blob) => URL.createObjectURL(blob));
        promise.catch(() => {});
        state.cache.set(index, promise);
      }
      return state.cache.get(index);
    };
    const forget = () => {
      for (const [index, promise] of state.cache) {
        if (Math.abs(index - state.index) > KEEP / 2) {
          promise.then((address) => URL.revokeObjectURL(address), () => {});
          state.cache.delete(index);
        }
      }
    };
    const show = async (index) => {
      state.index = index;
      const count = state.pages.length;
      previous.disabled = index <= 0;
      next.disabled = index >= count - 1;
      status.textContent = 'Page ' + (index + 1) + ' of ' + count;
      try {
        const address = await load(index);
        if (!root.isConnected || state.index !== index) return;
        image.src = address;
        image.alt = 'Page ' + (index + 1) + ' of ' + count;
        image.dataset.page = state.pages[index].name;
      } catch (e) {
        if (e.name === 'AbortError' || !root.isConnected) return;
        image.removeAttribute('src');
        image.alt = 'Page ' + (index + 1) + ' could not be read: ' + e.message;
      }
      for (let ahead = 1; ahead <= PRELOAD && index + ahead < count; ahead++) load(index + ahead);
      forget();
    };
    state.turn = (delta) => {
      const target = state.index + delta;
      if (target < 0 || target >= state.pages.length) return false;
      show(target);
      return true;
    };
    state.close = () => {
      controller.abort();
      for (const promise of state.cache.values()) promise.then((address) => URL.revokeObjectURL(address), () => {});
      state.cache.clear();
    };
    previous.addEventListener('click', () => state.turn(-1));
    next.addEventListener('click', () => state.turn(1));
    try {
      state.pages = comicPages(await zipEntries(url, item.size, controller.signal));
      if (!root.isConnected) return;
      if (!state.pages.length) {
        status.textContent = 'This comic has no pages the browser can show.';
        previous.disabled = next.disabled = true;
        return;
      }
      await show(0);
    } catch (e) {
      if (e.name === 'AbortError' || !root.isConnected) return;
      status.textContent = 'The comic could not be read: ' + e.message;
      previous.disabled = next.disabled = true;
    }
  }

  // The reader's keys and swipes, ahead of the viewer's own (which step
  // between files): ←/→, Page Up/Down and Space turn pages; past the first
  // or the last page they step to the previous or next file.
  function setupReaderInput() {
    const dialog = document.getElementById('preview');
    if (!dialog) return;
    const active = () => {
      if (reader && !reader.root.isConnected) { reader.close(); reader = null; }
      return reader;
    };
    dialog.addEventListener('keydown', (e) => {
      const current = active();
      if (!current || e.altKey || e.ctrlKey || e.metaKey) return;
      if (e.target.matches && e.target.matches('input, textarea, video, audio')) return;
      const delta = { ArrowLeft: -1, ArrowRight: 1, PageUp: -1, PageDown: 1, ' ': e.shiftKey ? -1 : 1 }[e.key];
      if (!delta) return;
      if (current.turn(delta)) { e.preventDefault(); e.stopPropagation(); }
    }, true);
    let startX = null;
    let startY = null;
    dialog.addEventListener('touchstart', (e) => {
      if (active() && e.touches.length === 1) { startX = e.touches[0].clientX; startY = e.touches[0].clientY; }
    }, { capture: true, passive: true });
    dialog.addEventListener('touchend', (e) => {
      const current = active();
      if (!current || startX === null || !e.changedTouches.length) return;
      const dx = e.changedTouches[0].clientX - startX;
      const dy = e.changedTouches[0].clientY - startY;
      startX = null;
      if (Math.abs(dx) > 60 && Math.abs(dx) > 2 * Math.abs(dy) && current.turn(dx < 0 ? 1 : -1)) e.stopPropagation();
    }, true);
    dialog.addEventListener('close', () => { if (reader) { reader.close(); reader = null; } });
  }

  // ---------------------------------------------------------------- hooks

  hooks.preview = (item, body) => {
    if (reader) { reader.close(); reader = null; }
    if (item.kind !== 'file') return false;
    const ext = page.extension(item.name);
    if (ext === 'md' || ext === 'markdown') { showMarkdown(item, body); return true; }
    if (ext === 'cbz') { showComic(item, body); return true; }
    return false;
  };

  // For tests and other scripts: the renderer, on its own.
  window.fileshareMarkdown = Markdown;

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', setupReaderInput);
  else setupReaderInput();
})();
