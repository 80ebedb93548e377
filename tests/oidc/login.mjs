// A browser-less sign-in at the test identity provider (tests/oidc/provider.mjs):
//
//   node tests/oidc/login.mjs <authorization-url> <user> <password>
//
// Follows the provider's redirects with a cookie jar, posts the login form of
// its login page, and prints the final redirect to the authorization URL's
// redirect_uri (the callback URL with code and state, or with error=...)
// without fetching it. Exit 0 when it reached the redirect_uri; 1 with a
// message on stderr otherwise (a wrong password: "login refused").
const [authUrl, user, password] = process.argv.slice(2);
if (!authUrl || user === undefined || password === undefined) {
  console.error('usage: node login.mjs <authorization-url> <user> <password>');
  process.exit(2);
}
const redirectUri = new URL(authUrl).searchParams.get('redirect_uri');
if (!redirectUri) {
  console.error('login.mjs: the authorization URL has no redirect_uri');
  process.exit(2);
}

const jar = new Map(); // cookie name -> value (one provider, one host)
function remember(response) {
  for (const line of response.headers.getSetCookie()) {
    const [pair] = line.split(';');
    const eq = pair.indexOf('=');
    const name = pair.slice(0, eq).trim();
    const value = pair.slice(eq + 1).trim();
    if (/expires=Thu, 01 Jan 1970/i.test(line) || value === '') jar.delete(name);
    else jar.set(name, value);
  }
}
function cookieHeader() {
  return [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
}
function isCallback(url) {
  return url.startsWith(redirectUri + '?') || url.startsWith(redirectUri + '#') || url === redirectUri;
}

async function go(url, init = {}) {
  const response = await fetch(url, {
    ...init,
    redirect: 'manual',
    headers: { ...(init.headers ?? {}), cookie: cookieHeader() },
  });
  remember(response);
  return response;
}

let url = authUrl;
let init = {};
let posted = false;
for (let hop = 0; hop < 20; hop++) {
  const response = await go(url, init);
  init = {};
  const location = response.headers.get('location');
  if (response.status >= 300 && response.status < 400 && location) {
    const next = new URL(location, url).toString();
    if (isCallback(next)) {
      console.log(next);
      process.exit(0);
    }
    url = next;
    continue;
  }
  const body = await response.text();
  if (response.status !== 200) {
    console.error(`login.mjs: ${response.status} from ${url}: ${body.slice(0, 500)}`);
    process.exit(1);
  }
  if (body.includes('id="login-error"')) {
    console.error('login.mjs: login refused');
    process.exit(1);
  }
  const form = body.match(/<form[^>]*action="([^"]+)"/);
  if (!form || posted) {
    console.error(`login.mjs: no login form at ${url}: ${body.slice(0, 500)}`);
    process.exit(1);
  }
  posted = true;
  url = new URL(form[1].replace(/&amp;/g, '&'), url).toString();
  init = {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ login: user, password }).toString(),
  };
}
console.error('login.mjs: too many redirects');
process.exit(1);
