// Passkeys (WebAuthn): the login page's "Sign in with a passkey" (and
// its "Use a passkey instead" after a two-factor account's password), and
// the account page's "Add a passkey". Each asks the box for a ceremony's
// options, has the browser sign them, and posts the answer with the
// page's own form. No framework; the box does every check.
'use strict';
(() => {
  const $ = (id) => document.getElementById(id);
  // WebAuthn's JSON carries bytes as unpadded base64url.
  const bytes = (s) => Uint8Array.from(atob(s.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0));
  const text = (buf) => btoa(String.fromCharCode(...new Uint8Array(buf))).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');

  // begin posts fields to url and returns the ceremony: its token and
  // options. A refusal throws the box's words.
  async function begin(url, fields, csrf) {
    const resp = await fetch(url, {
      method: 'POST', credentials: 'same-origin', body: new URLSearchParams(fields),
      headers: csrf ? { 'X-CSRF-Token': csrf } : {},
    });
    const body = await resp.text();
    if (!resp.ok) throw new Error(body.trim() || resp.status + ' ' + resp.statusText);
    return JSON.parse(body);
  }

  // answer is the browser's credential as the box reads it.
  function answer(cred) {
    const r = cred.response;
    const out = { id: cred.id, rawId: text(cred.rawId), type: cred.type, clientExtensionResults: cred.getClientExtensionResults(), response: { clientDataJSON: text(r.clientDataJSON) } };
    if (cred.authenticatorAttachment) out.authenticatorAttachment = cred.authenticatorAttachment;
    if (r.attestationObject) {
      out.response.attestationObject = text(r.attestationObject);
      if (r.getTransports) out.response.transports = r.getTransports();
    } else {
      out.response.authenticatorData = text(r.authenticatorData);
      out.response.signature = text(r.signature);
      if (r.userHandle) out.response.userHandle = text(r.userHandle);
    }
    return JSON.stringify(out);
  }

  // run does one ceremony for form: begin, the browser, then the form
  // posts the answer. Problems show in the form's alert.
  async function run(form, url, fields, csrf, browser) {
    const problem = $('passkey-problem');
    problem.hidden = true;
    try {
      const c = await begin(url, fields, csrf);
      const cred = await browser(c.options.publicKey);
      form.elements.token.value = c.token;
      form.elements.answer.value = answer(cred);
      form.submit();
    } catch (e) {
      problem.textContent = e.name === 'NotAllowedError' ? 'No passkey was given (cancelled, or none for this box here).' : e.message;
      problem.hidden = false;
    }
  }

  if (!window.PublicKeyCredential) return; // the forms stay hidden or say so
  const login = $('passkey-form');
  if (login) {
    login.hidden = false;
    $('passkey').addEventListener('click', () => run(login, '/login/passkey/begin', { csrf: login.elements.csrf.value }, '', (o) => {
      o.challenge = bytes(o.challenge);
      (o.allowCredentials || []).forEach((c) => { c.id = bytes(c.id); });
      return navigator.credentials.get({ publicKey: o });
    }));
  }
  const add = $('passkey-new');
  if (add) {
    add.addEventListener('submit', (ev) => {
      ev.preventDefault();
      const f = add.elements;
      const fields = { name: f.name.value, current: f.current.value };
      f.current.value = ''; // posted once, to begin
      run(add, '/account/passkey/begin', fields, f.csrf.value, (o) => {
        o.challenge = bytes(o.challenge);
        o.user.id = bytes(o.user.id);
        (o.excludeCredentials || []).forEach((c) => { c.id = bytes(c.id); });
        return navigator.credentials.create({ publicKey: o });
      });
    });
  }
})();
