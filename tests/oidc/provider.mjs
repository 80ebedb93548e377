// The real OpenID Connect identity provider of maestro's OIDC sign-in tests
// (issue 49): npm oidc-provider (pinned in package-lock.json, installed by
// scripts/npm_pinned.sh tests/oidc) with one confidential client, its own
// plain login page, and test-only endpoints.
//
//   node tests/oidc/provider.mjs --port P --issuer http://127.0.0.1:P \
//        --keys FILE --client-id maestro --client-secret S \
//        --redirect-uri URI [--redirect-uri URI2] [--post-logout-redirect-uri URI] \
//        [--users FILE] [--test-endpoints]
//     prints `READY <issuer>` once it listens on 127.0.0.1:P.
//   node tests/oidc/provider.mjs --make-keys FILE [--kid K] [--prepend]
//     writes a JWKS with one new RS256 private key to FILE, or with --prepend
//     puts a new key in front of FILE's keys (a rotation: the first key signs,
//     the old ones stay published).
//
// The client: authorization-code flow only, PKCE (S256) required,
// client_secret_basic at the token endpoint. Claims: preferred_username,
// email (scope email), groups (scope groups); they are put in the ID token
// itself (conformIdTokenClaims: false), as maestro reads only the ID token.
// Consent is granted automatically (loadExistingGrant).
//
// Users: --users FILE is a JSON object {"alice": {"password": "alice",
// "email": "...", "groups": [...], "claims": {...extra or overriding claims}}};
// without it alice/bob/carol/dave with passwords equal to their names.
//
// The login page: GET /interaction/:uid is a form with inputs name=login,
// name=password and a button id=login-submit; POST /interaction/:uid/login
// checks the password (a wrong one shows the form again with an error).
//
// Test endpoints (only with --test-endpoints):
//   POST /test/sign {claims, kid?, alg?, key?: "current"|"stranger"} → a
//     compact JWS over `claims`. key "current" (the default): signed with the
//     provider's key whose kid is `kid` (default: the first, signing key);
//     "stranger": a key the provider never publishes, the header's kid `kid`
//     (default "stranger"). alg "none": an unsecured JWS; alg "HS256": HMAC
//     keyed with the current key's public PEM (the algorithm-confusion attack).
//   GET /test/stats → {"jwks": n, "discovery": n, "token": n} requests served.
import http from 'node:http';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { parseArgs } from 'node:util';

const { values: args } = parseArgs({
  options: {
    port: { type: 'string' },
    issuer: { type: 'string' },
    keys: { type: 'string' },
    'client-id': { type: 'string', default: 'maestro' },
    'client-secret': { type: 'string' },
    'redirect-uri': { type: 'string', multiple: true },
    'post-logout-redirect-uri': { type: 'string', multiple: true },
    users: { type: 'string' },
    'test-endpoints': { type: 'boolean', default: false },
    'make-keys': { type: 'string' },
    kid: { type: 'string' },
    prepend: { type: 'boolean', default: false },
  },
});

function newRsaJwk(kid) {
  const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = privateKey.export({ format: 'jwk' });
  return { ...jwk, kid: kid || crypto.randomBytes(8).toString('hex'), alg: 'RS256', use: 'sig' };
}

if (args['make-keys']) {
  const file = args['make-keys'];
  let keys = [];
  if (args.prepend && fs.existsSync(file)) keys = JSON.parse(fs.readFileSync(file, 'utf8')).keys;
  keys.unshift(newRsaJwk(args.kid));
  fs.writeFileSync(file, JSON.stringify({ keys }, null, 2) + '\n', { mode: 0o600 });
  process.exit(0);
}

for (const required of ['port', 'issuer', 'keys', 'client-secret', 'redirect-uri']) {
  if (!args[required]) {
    console.error(`provider.mjs: --${required} is required`);
    process.exit(2);
  }
}

const { default: Provider } = await import('oidc-provider');
const jose = await import('jose');

const DEFAULT_USERS = {
  alice: { password: 'alice', groups: ['eng-platform'] },
  bob: { password: 'bob', groups: ['platform-approvers'] },
  carol: { password: 'carol', groups: ['platform-viewers'] },
  dave: { password: 'dave', groups: ['other-team'] },
};
const users = args.users ? JSON.parse(fs.readFileSync(args.users, 'utf8')) : DEFAULT_USERS;
const jwks = JSON.parse(fs.readFileSync(args.keys, 'utf8'));
const stats = { jwks: 0, discovery: 0, token: 0 };

function claimsOf(name) {
  const user = users[name];
  return {
    sub: name,
    preferred_username: name,
    name,
    email: user.email ?? `${name}@example.test`,
    email_verified: true,
    groups: user.groups ?? [],
    ...(user.claims ?? {}),
  };
}

const provider = new Provider(args.issuer, {
  clients: [
    {
      client_id: args['client-id'],
      client_secret: args['client-secret'],
      redirect_uris: args['redirect-uri'],
      post_logout_redirect_uris: args['post-logout-redirect-uri'] ?? [],
      response_types: ['code'],
      grant_types: ['authorization_code'],
      token_endpoint_auth_method: 'client_secret_basic',
    },
  ],
  jwks,
  cookies: { keys: [crypto.randomBytes(32).toString('hex')] },
  pkce: { required: () => true },
  responseTypes: ['code'],
  scopes: ['openid', 'profile', 'email', 'groups'],
  claims: {
    openid: ['sub'],
    profile: ['preferred_username', 'name'],
    email: ['email', 'email_verified'],
    groups: ['groups'],
  },
  conformIdTokenClaims: false,
  features: {
    devInteractions: { enabled: false },
    rpInitiatedLogout: { enabled: true },
  },
  ttl: {
    AccessToken: 600,
    AuthorizationCode: 60,
    IdToken: 600,
    Interaction: 600,
    Session: 3600,
    Grant: 3600,
  },
  interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
  async findAccount(_ctx, id) {
    if (!Object.hasOwn(users, id)) return undefined;
    return { accountId: id, claims: async () => claimsOf(id) };
  },
  // Consent is implied: the grant covers whatever the client asked for.
  async loadExistingGrant(ctx) {
    const grantId = ctx.oidc.result?.consent?.grantId || ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
    if (grantId) {
      const grant = await ctx.oidc.provider.Grant.find(grantId);
      if (grant) return grant;
    }
    const grant = new ctx.oidc.provider.Grant({
      clientId: ctx.oidc.client.clientId,
      accountId: ctx.oidc.session.accountId,
    });
    grant.addOIDCScope(ctx.oidc.requestParamScopes ? [...ctx.oidc.requestParamScopes].join(' ') : 'openid');
    grant.addOIDCClaims(['preferred_username', 'email', 'groups']);
    await grant.save();
    return grant;
  },
  renderError(ctx, out) {
    ctx.type = 'html';
    ctx.body = `<!doctype html><title>error</title><pre id="error">${escapeHtml(JSON.stringify(out))}</pre>`;
  },
});
provider.on('server_error', (_ctx, err) => console.error('server_error', err));

function escapeHtml(text) {
  return String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function loginPage(uid, error) {
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>Sign in — test identity provider</title></head>
<body>
<h1>Sign in</h1>
${error ? `<p id="login-error">${escapeHtml(error)}</p>` : ''}
<form method="post" action="/interaction/${escapeHtml(uid)}/login" autocomplete="off">
  <label>User <input name="login" autofocus></label>
  <label>Password <input name="password" type="password"></label>
  <button type="submit" id="login-submit">Sign in</button>
</form>
</body></html>`;
}

async function readBody(req, limit = 1 << 20) {
  const chunks = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.length;
    if (size > limit) throw new Error('body too large');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function send(res, status, type, body) {
  res.writeHead(status, { 'Content-Type': type, 'Cache-Control': 'no-store' });
  res.end(body);
}

async function interaction(req, res, uid, action) {
  const details = await provider.interactionDetails(req, res);
  if (details.uid !== uid) return send(res, 400, 'text/plain', 'interaction mismatch');
  if (details.prompt.name !== 'login') {
    // consent (should not happen: loadExistingGrant grants it) — grant it.
    const grant = new provider.Grant({ clientId: details.params.client_id, accountId: details.session.accountId });
    grant.addOIDCScope(String(details.params.scope ?? 'openid'));
    const grantId = await grant.save();
    return provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
  }
  if (req.method === 'GET' && !action) return send(res, 200, 'text/html; charset=utf-8', loginPage(uid));
  if (req.method === 'POST' && action === 'login') {
    const form = new URLSearchParams(await readBody(req));
    const login = form.get('login') ?? '';
    const password = form.get('password') ?? '';
    const user = Object.hasOwn(users, login) ? users[login] : undefined;
    if (!user || user.password !== password) {
      return send(res, 200, 'text/html; charset=utf-8', loginPage(uid, 'Wrong user name or password.'));
    }
    return provider.interactionFinished(req, res, { login: { accountId: login } }, { mergeWithLastSubmission: false });
  }
  return send(res, 405, 'text/plain', 'method not allowed');
}

// A stranger key: never in the JWKS (forged-signature tests).
const stranger = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;

async function testSign(req, res) {
  let spec;
  try {
    spec = JSON.parse(await readBody(req));
  } catch {
    return send(res, 400, 'application/json', '{"error":"body is not JSON"}');
  }
  const claims = spec.claims ?? {};
  const alg = spec.alg ?? 'RS256';
  const which = spec.key ?? 'current';
  let keyJwk = jwks.keys[0];
  if (which === 'current' && spec.kid) keyJwk = jwks.keys.find((k) => k.kid === spec.kid);
  if (which === 'current' && !keyJwk) return send(res, 400, 'application/json', '{"error":"no key with that kid"}');
  const kid = which === 'stranger' ? (spec.kid ?? 'stranger') : keyJwk.kid;
  const b64 = (x) => Buffer.from(typeof x === 'string' ? x : JSON.stringify(x)).toString('base64url');
  let token;
  if (alg === 'none') {
    token = `${b64({ alg: 'none', kid })}.${b64(claims)}.`;
  } else if (alg === 'HS256') {
    const pem = crypto.createPublicKey({ key: keyJwk, format: 'jwk' }).export({ type: 'spki', format: 'pem' });
    const input = `${b64({ alg: 'HS256', kid })}.${b64(claims)}`;
    token = `${input}.${crypto.createHmac('sha256', pem).update(input).digest('base64url')}`;
  } else {
    const key = which === 'stranger' ? stranger : crypto.createPrivateKey({ key: keyJwk, format: 'jwk' });
    token = await new jose.CompactSign(Buffer.from(JSON.stringify(claims)))
      .setProtectedHeader({ alg, kid, typ: 'JWT' })
      .sign(key);
  }
  return send(res, 200, 'application/json', JSON.stringify({ token }));
}

const oidc = provider.callback();
const server = http.createServer(async (req, res) => {
  try {
    const url = new URL(req.url, args.issuer);
    if (url.pathname === '/jwks') stats.jwks++;
    if (url.pathname === '/.well-known/openid-configuration') stats.discovery++;
    if (url.pathname === '/token') stats.token++;
    const m = url.pathname.match(/^\/interaction\/([A-Za-z0-9_-]+)(?:\/(login))?$/);
    if (m) return await interaction(req, res, m[1], m[2]);
    if (args['test-endpoints'] && url.pathname === '/test/sign' && req.method === 'POST') return await testSign(req, res);
    if (args['test-endpoints'] && url.pathname === '/test/stats') {
      return send(res, 200, 'application/json', JSON.stringify(stats));
    }
    return oidc(req, res);
  } catch (err) {
    console.error('provider.mjs:', err);
    if (!res.headersSent) send(res, 500, 'text/plain', String(err?.message ?? err));
  }
});
server.listen(Number(args.port), '127.0.0.1', () => {
  console.log(`READY ${args.issuer}`);
});
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  });
}
