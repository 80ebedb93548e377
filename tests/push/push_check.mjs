// The browser's side of a Web Push message, done by an independent
// implementation: npm http_ece (RFC 8188/8291 aes128gcm, pinned in
// package-lock.json) and node's own crypto for the VAPID JWT.
//
//   node push_check.mjs keys
//     -> {"p256dh", "auth", "private"}: a subscription's keys (base64url),
//        as a browser's PushManager makes them, and the private half.
//   node push_check.mjs open <file.json>
//     <file.json>: {"private", "auth", "p256dh", "body" (base64 of the
//        POST body), "authorization", "endpoint", "server_key" (the VAPID
//        public key GET /api/local/push/key advertised)}
//     -> {"payload": <the decrypted JSON>, "jwt": {"header", "claims"},
//         "signature_ok": bool, "k_matches": bool}
// Exit 1 with a message on stderr when the body does not decrypt.
import crypto from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const ece = require('http_ece');

const b64u = (buf) => Buffer.from(buf).toString('base64url');
const unb64u = (s) => Buffer.from(s, 'base64url');

function keys() {
  const ecdh = crypto.createECDH('prime256v1');
  ecdh.generateKeys();
  return {
    p256dh: b64u(ecdh.getPublicKey()),
    auth: b64u(crypto.randomBytes(16)),
    private: b64u(ecdh.getPrivateKey()),
  };
}

// An EC P-256 public KeyObject from the 65-byte uncompressed point.
function publicKeyOf(point) {
  return crypto.createPublicKey({
    key: { kty: 'EC', crv: 'P-256', x: b64u(point.subarray(1, 33)), y: b64u(point.subarray(33, 65)) },
    format: 'jwk',
  });
}

function open(file) {
  const m = JSON.parse(fs.readFileSync(file, 'utf8'));
  const ua = crypto.createECDH('prime256v1');
  ua.setPrivateKey(unb64u(m.private));
  const plain = ece.decrypt(Buffer.from(m.body, 'base64'), {
    version: 'aes128gcm',
    privateKey: ua,
    authSecret: unb64u(m.auth),
  });
  const auth = /^vapid t=([^,]+), k=(.+)$/.exec(m.authorization || '');
  if (!auth) throw new Error(`not a vapid Authorization header: ${m.authorization}`);
  const [h, c, s] = auth[1].split('.');
  const signature_ok = crypto.verify(
    'sha256',
    Buffer.from(`${h}.${c}`),
    { key: publicKeyOf(unb64u(m.server_key)), dsaEncoding: 'ieee-p1363' },
    unb64u(s),
  );
  return {
    payload: JSON.parse(plain.toString('utf8')),
    jwt: { header: JSON.parse(unb64u(h)), claims: JSON.parse(unb64u(c)) },
    signature_ok,
    k_matches: auth[2] === m.server_key,
  };
}

try {
  const [mode, arg] = process.argv.slice(2);
  const out = mode === 'keys' ? keys() : mode === 'open' ? open(arg) : null;
  if (!out) throw new Error('usage: push_check.mjs keys | open FILE');
  process.stdout.write(JSON.stringify(out) + '\n');
} catch (e) {
  process.stderr.write(`push_check: ${e.message}\n`);
  process.exit(1);
}
