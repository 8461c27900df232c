// bonesync's pages: file changes go to WebDAV with the session and its
// CSRF token; everything else is plain forms. No framework, no network
// beyond the box.
'use strict';
(() => {
  const csrf = document.querySelector('meta[name=csrf]')?.content || '';
  const $ = (id) => document.getElementById(id);

  // ask shows the page's dialog: a name to enter (value given) or a
  // question to confirm (value null). It resolves to the text, true, or
  // null when cancelled.
  function ask(title, label, value, text) {
    const dlg = $('ask');
    if (!dlg) return Promise.resolve(value === null ? confirm(text) : prompt(label, value));
    $('ask-title').textContent = title;
    const input = $('ask-input');
    $('ask-label').textContent = label;
    $('ask-label').hidden = input.hidden = value === null;
    $('ask-text').textContent = text || '';
    input.value = value || '';
    return new Promise((resolve) => {
      dlg.addEventListener('close', () => {
        if (dlg.returnValue !== 'ok') resolve(null);
        else resolve(value === null ? true : input.value.trim());
      }, { once: true });
      dlg.returnValue = '';
      dlg.showModal();
      if (value !== null) { input.focus(); input.select(); } else $('ask-ok').focus();
    });
  }

  function say(msg, problem) {
    const r = $('result');
    if (!r) return alert(msg);
    r.textContent = msg;
    r.className = problem ? 'problem' : 'flash';
    r.setAttribute('role', problem ? 'alert' : 'status');
  }

  async function dav(method, url, headers) {
    const resp = await fetch(url, { method, credentials: 'same-origin', headers: Object.assign({ 'X-CSRF-Token': csrf }, headers || {}) });
    if (!resp.ok && !(method === 'MKCOL' && resp.status === 405)) {
      const body = (await resp.text()).trim();
      throw new Error(body || resp.status + ' ' + resp.statusText);
    }
    return resp;
  }

  // On a phone the menu is one row that scrolls sideways: show the page's
  // own entry in it (the row alone scrolls, not the page).
  const nav = document.querySelector('.top nav'), current = nav?.querySelector('[aria-current]');
  if (current && nav.scrollWidth > nav.clientWidth) {
    nav.scrollLeft += current.getBoundingClientRect().left - nav.getBoundingClientRect().left - 16;
  }

  // A name is one path segment, escaped as a URL path needs.
  const seg = (name) => encodeURIComponent(name);
  const badName = (n) => !n || n === '.' || n === '..' || n.includes('/');

  const files = $('files');
  if (files) {
    const here = files.dataset.dav; // the folder's WebDAV path, ending in '/'
    const trashOn = files.dataset.trash === 'true';
    const origin = location.origin;

    $('new-folder').addEventListener('click', async () => {
      const name = await ask('New folder', 'Folder name', '');
      if (name === null) return;
      if (badName(name)) return say('A folder name cannot be empty or hold a "/".', true);
      try { await dav('MKCOL', here + seg(name) + '/'); location.assign(location.pathname); } catch (e) { say('Not made: ' + e.message, true); }
    });

    files.addEventListener('click', async (ev) => {
      const btn = ev.target.closest('button[data-act]');
      if (!btn) return;
      const row = btn.closest('tr');
      const name = row.dataset.name, dir = row.dataset.dir === 'true';
      const src = here + seg(name) + (dir ? '/' : '');
      try {
        switch (btn.dataset.act) {
          case 'rename': {
            const to = await ask('Rename', 'New name for ' + name, name);
            if (to === null || to === name) return;
            if (badName(to)) return say('A name cannot be empty or hold a "/".', true);
            await dav('MOVE', src, { Destination: origin + here + seg(to) + (dir ? '/' : ''), Overwrite: 'F' });
            break;
          }
          case 'move': {
            const folder = await ask('Move', 'Move ' + name + ' to the folder (from the top, like /photos/2024)', decodeURIComponent(here.replace(/^\/dav/, '')));
            if (folder === null) return;
            const parts = folder.split('/').filter((p) => p !== '');
            if (parts.some((p) => p === '.' || p === '..')) return say('Name the folder from the top, without . or ..', true);
            const dest = '/dav/' + parts.map(seg).join('/') + (parts.length ? '/' : '') + seg(name) + (dir ? '/' : '');
            await dav('MOVE', src, { Destination: origin + dest, Overwrite: 'F' });
            break;
          }
          case 'delete': {
            if (!trashOn && !(await ask('Delete', '', null, 'Delete ' + name + ' for good? The trash is off.'))) return;
            await dav('DELETE', src);
            break;
          }
        }
        location.assign(location.pathname + location.search);
      } catch (e) {
        say(btn.dataset.act[0].toUpperCase() + btn.dataset.act.slice(1) + ' of ' + name + ' failed: ' + e.message, true);
      }
    });

    // Uploads: one file at a time, streamed from the disk by the browser,
    // with the file's date (X-OC-Mtime) kept as the sync clients keep it.
    let current = null, cancelled = false;
    const put = (url, file, progress) => new Promise((resolve, reject) => {
      const x = new XMLHttpRequest();
      current = x;
      x.open('PUT', url);
      x.setRequestHeader('X-CSRF-Token', csrf);
      x.setRequestHeader('Content-Type', 'application/octet-stream');
      if (file.lastModified) x.setRequestHeader('X-OC-Mtime', String(Math.floor(file.lastModified / 1000)));
      x.upload.onprogress = (e) => progress(e.loaded);
      x.onload = () => (x.status < 300 ? resolve() : reject(new Error(x.responseText.trim() || String(x.status))));
      x.onerror = () => reject(new Error('the connection failed'));
      x.onabort = () => reject(new Error('cancelled'));
      x.send(file);
    });

    async function upload(items) { // [{file, path: 'a/b/name'}]
      if (!items.length) return;
      const box = $('uploads'), bar = $('up-progress'), status = $('up-status');
      const total = items.reduce((n, it) => n + it.file.size, 0) || 1;
      let done = 0;
      cancelled = false;
      box.hidden = false;
      const made = new Set();
      try {
        for (const [i, it] of items.entries()) {
          if (cancelled) throw new Error('cancelled');
          const parts = it.path.split('/').filter((p) => p !== '');
          let dir = here;
          for (const p of parts.slice(0, -1)) {
            dir += seg(p) + '/';
            if (!made.has(dir)) { await dav('MKCOL', dir); made.add(dir); }
          }
          status.textContent = (i + 1) + ' of ' + items.length + ': ' + it.path;
          await put(dir + seg(parts[parts.length - 1]), it.file, (n) => { bar.value = Math.round(100 * (done + n) / total); });
          done += it.file.size;
        }
        bar.value = 100;
        status.textContent = items.length + (items.length === 1 ? ' file' : ' files') + ' uploaded';
        location.assign(location.pathname);
      } catch (e) {
        say('Upload stopped: ' + e.message + '. Files finished before it are kept; the one in progress is not.', true);
        box.hidden = true;
      } finally {
        current = null;
      }
    }
    $('up-cancel').addEventListener('click', () => { cancelled = true; if (current) current.abort(); });
    const fromInput = (input) => upload([...input.files].map((f) => ({ file: f, path: f.webkitRelativePath || f.name })));
    $('pick-files').addEventListener('change', (e) => fromInput(e.target));
    $('pick-folder').addEventListener('change', (e) => fromInput(e.target));

    // Drag and drop of files and folders (read through the entries API).
    const drop = $('drop');
    const readAll = (reader) => new Promise((resolve, reject) => {
      const out = [];
      const more = () => reader.readEntries((batch) => { if (!batch.length) resolve(out); else { out.push(...batch); more(); } }, reject);
      more();
    });
    async function walk(entry, prefix, out) {
      if (entry.isFile) {
        const file = await new Promise((res, rej) => entry.file(res, rej));
        out.push({ file, path: prefix + entry.name });
      } else if (entry.isDirectory) {
        for (const e of await readAll(entry.createReader())) await walk(e, prefix + entry.name + '/', out);
      }
    }
    document.addEventListener('dragover', (e) => { e.preventDefault(); drop.classList.add('over'); });
    document.addEventListener('dragleave', (e) => { if (!e.relatedTarget) drop.classList.remove('over'); });
    document.addEventListener('drop', async (e) => {
      e.preventDefault();
      drop.classList.remove('over');
      const entries = [...e.dataTransfer.items].map((it) => it.webkitGetAsEntry && it.webkitGetAsEntry()).filter(Boolean);
      const out = [];
      if (entries.length) for (const en of entries) await walk(en, '', out);
      else for (const f of e.dataTransfer.files) out.push({ file: f, path: f.name });
      upload(out);
    });
  }

  // Copy buttons (the sharing page's links): the text of the element
  // data-copy names goes to the clipboard, or, where the browser refuses,
  // is selected for the person to copy.
  document.addEventListener('click', async (ev) => {
    const btn = ev.target.closest('button[data-copy]');
    if (!btn) return;
    const src = $(btn.dataset.copy);
    try {
      await navigator.clipboard.writeText(src.textContent);
      say('The link is copied.');
    } catch (e) {
      const range = document.createRange();
      range.selectNodeContents(src);
      getSelection().removeAllRanges();
      getSelection().addRange(range);
      say('The browser did not let the page copy: the link is selected, copy it from there.', true);
    }
  });

  // Admin: confirmations, the benchmark's progress, the update upload.
  document.addEventListener('submit', async (ev) => {
    const b = ev.submitter;
    if (!b || !b.dataset.confirm || b.dataset.confirmed) return;
    ev.preventDefault();
    if (await ask('Are you sure?', '', null, b.dataset.confirm)) { b.dataset.confirmed = '1'; b.click(); }
  });
  // A form that asks for the password again (data-retype): the password
  // goes to /admin/confirm first, then the form without it.
  document.addEventListener('submit', async (ev) => {
    const f = ev.target;
    if (!f.hasAttribute || !f.hasAttribute('data-retype')) return;
    ev.preventDefault();
    const pw = f.querySelector('[data-retype-password]'), out = f.querySelector('.retype-result');
    const confirm = await fetch('/admin/confirm', { method: 'POST', credentials: 'same-origin',
      headers: { 'X-CSRF-Token': csrf, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ password: pw.value }) });
    if (!confirm.ok) { out.textContent = await confirm.text(); return; }
    pw.value = '';
    f.submit();
  });
  const bench = $('bench');
  if (bench && bench.dataset.running === 'true') {
    const log = $('bench-log');
    const poll = async () => {
      const st = await (await fetch('/admin/bench.json', { credentials: 'same-origin' })).json();
      log.hidden = false;
      log.textContent = st.lines.join('\n') + (st.error ? '\nFailed: ' + st.error : '');
      if (st.running) setTimeout(poll, 1000); else if (!st.error) location.assign('/admin/');
    };
    poll();
  }
  const send = $('update-send');
  if (send) send.addEventListener('click', async () => {
    const file = $('update-file').files[0], out = $('update-result'), bar = $('update-progress');
    if (!file) { out.textContent = 'Choose the update bundle first.'; return; }
    // The password again: the box asks for it within 5 minutes of an update.
    const confirm = await fetch('/admin/confirm', { method: 'POST', credentials: 'same-origin',
      headers: { 'X-CSRF-Token': csrf, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ password: $('update-password').value }) });
    if (!confirm.ok) { out.textContent = await confirm.text(); return; }
    $('update-password').value = '';
    const x = new XMLHttpRequest();
    x.open('PUT', '/admin/update');
    x.setRequestHeader('X-CSRF-Token', csrf);
    bar.hidden = false;
    x.upload.onprogress = (e) => { bar.value = Math.round(100 * e.loaded / (e.total || 1)); };
    x.onload = () => { out.textContent = x.responseText; send.disabled = x.status === 200; };
    x.onerror = () => { out.textContent = 'The upload failed: the connection broke (is the box rebooting?).'; };
    send.disabled = true;
    x.send(file);
  });
})();
