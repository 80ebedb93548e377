// Test harness for the UI end-to-end tests: starts a real maestro-fakellm and
// a real `maestro serve` (own data dir, free loopback ports) and Debian's
// Chromium through playwright-core (no browser download). Binaries come from
// MAESTRO_BIN / MAESTRO_FAKELLM_BIN, else build/debug, else build/release.
import { spawn, spawnSync } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

export const UI_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const REPO = resolve(UI_DIR, '..');
export const ARTIFACTS = process.env.MAESTRO_E2E_ARTIFACTS ?? join(REPO, 'build', 'ui-e2e-artifacts');
export const TOKEN = 'e2e-admin-token';

function findBin(envName, rel) {
  if (process.env[envName]) return process.env[envName];
  for (const preset of ['debug', 'release']) {
    const p = join(REPO, 'build', preset, rel);
    if (existsSync(p)) return p;
  }
  throw new Error(`${rel} not built (set ${envName} or build the debug preset)`);
}

export const MAESTRO_BIN = () => findBin('MAESTRO_BIN', 'src/cli/maestro');
export const FAKELLM_BIN = () => findBin('MAESTRO_FAKELLM_BIN', 'src/fakellm/maestro-fakellm');

export function freePort() {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => res(port));
    });
  });
}

// Spawns a child whose output goes to a log file in the artifacts dir.
function start(cmd, args, env, logName) {
  mkdirSync(ARTIFACTS, { recursive: true });
  const child = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const log = createWriteStream(join(ARTIFACTS, logName));
  child.stdout.pipe(log);
  child.stderr.pipe(log);
  return child;
}

function firstLine(child, prefix, ms) {
  return new Promise((res, rej) => {
    let buf = '';
    const t = setTimeout(() => rej(new Error(`no "${prefix}" line within ${ms} ms`)), ms);
    child.stdout.on('data', (d) => {
      buf += d.toString();
      const line = buf.split('\n').find((l) => l.startsWith(prefix));
      if (line) {
        clearTimeout(t);
        res(line);
      }
    });
    child.once('exit', (code) => rej(new Error(`exited with ${code} before "${prefix}"`)));
  });
}

async function waitHealthy(base, ms) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    try {
      const r = await fetch(`${base}/api/health`);
      if (r.ok) return;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`maestro serve did not become healthy at ${base}`);
}

export function stopChild(child, ms = 10000) {
  return new Promise((res) => {
    if (!child || child.exitCode !== null || child.signalCode !== null) return res(child?.exitCode ?? null);
    const t = setTimeout(() => child.kill('SIGKILL'), ms);
    child.once('exit', (code, sig) => {
      clearTimeout(t);
      res(code ?? sig);
    });
    child.kill('SIGTERM');
  });
}

// The price table the harness configures so the UI shows costs (USD per
// million tokens). Only written when this server build knows `llm.price`
// (an older one refuses unknown keys).
export const PRICE = { input: 2, cached_input: 0.5, output: 8 };

function supportsPrice(base) {
  const dir = mkdtempSync(join(tmpdir(), 'maestro-e2e-probe-'));
  const cfg = join(dir, 'maestro.yaml');
  writeFileSync(cfg, base + priceYaml());
  const r = spawnSync(MAESTRO_BIN(), ['--config', cfg, 'piece', 'list'], {
    env: { ...process.env, MAESTRO_DATA_DIR: dir },
    encoding: 'utf8',
    timeout: 30000,
  });
  rmSync(dir, { recursive: true, force: true });
  return !/unknown key/.test(`${r.stdout}${r.stderr}`);
}

const priceYaml = () =>
  `llm:\n  price:\n    input: ${PRICE.input}\n    cached_input: ${PRICE.cached_input}\n    output: ${PRICE.output}\n`;

// Starts maestro serve. `script`: run our own fakellm with it and point
// MAESTRO_LLM_BASE_URL there; `demoScript`: no base URL — demo mode.
// `restart()` stops serve (SIGTERM) and starts it again on the same data dir
// and port; the fake model keeps running. `config(dataDir)`: more YAML for
// maestro.yaml (e.g. a `spaces:` block whose paths live in the data dir).
// `workers`: serve's worker threads (0: the API only; a test then starts
// `maestro worker` processes with stack.env and stack.config). `port`: serve
// listens there instead of a free port picked here (a config that names its
// own URL, e.g. auth.oidc.redirect_uri, needs it first); `env`: more
// environment for serve.
export async function startStack({ script, demoScript, name, config: extraConfig, workers = 3, port: fixedPort, env: extraEnv }) {
  suite = name;
  mkdirSync(ARTIFACTS, { recursive: true });
  const dataDir = mkdtempSync(join(tmpdir(), `maestro-e2e-${name}-`));
  // A short shutdown grace: a job still streaming must not hold the stop up.
  const config = join(dataDir, 'maestro.yaml');
  // A stand-in pip installer (runs sandboxed, writes a marker) so an approved
  // package request completes without a download.
  const base = 'jobs:\n  shutdown_grace_ms: 500\n' +
    'packages:\n  installers:\n    pip: "echo {name}{version_spec} > {target}/INSTALLED"\n';
  const priced = supportsPrice(base);
  writeFileSync(config, base + (priced ? priceYaml() : '') + (extraConfig ? extraConfig(dataDir) : ''));
  const port = fixedPort ?? (await freePort());
  const env = { ...process.env };
  delete env.MAESTRO_LLM_BASE_URL;
  Object.assign(env, {
    MAESTRO_DATA_DIR: dataDir,
    MAESTRO_LISTEN: `127.0.0.1:${port}`,
    MAESTRO_ADMIN_TOKEN: TOKEN,
    MAESTRO_UI_DIR: join(UI_DIR, 'dist'),
    MAESTRO_WORKERS: String(workers),
    MAESTRO_LOG_LEVEL: 'info',
    ...(extraEnv ?? {}),
  });
  let fake = null;
  if (script) {
    fake = start(FAKELLM_BIN(), ['--host', '127.0.0.1', '--port', '0', '--script', script], {}, `${name}-fakellm.log`);
    const line = await firstLine(fake, 'listening ', 15000);
    env.MAESTRO_LLM_BASE_URL = `http://${line.slice('listening '.length).trim()}/v1`;
  } else {
    env.MAESTRO_DEMO_SCRIPT = demoScript;
  }
  const url = `http://127.0.0.1:${port}`;
  let runs = 0;
  const launch = async () => {
    runs += 1;
    const serve = spawn(MAESTRO_BIN(), ['--config', config, 'serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const log = createWriteStream(join(ARTIFACTS, `${name}-serve${runs > 1 ? `-${runs}` : ''}.log`));
    serve.stdout.pipe(log);
    serve.stderr.pipe(log);
    await waitHealthy(url, 60000);
    return serve;
  };
  const stack = {
    base: url,
    serve: await launch(),
    fake,
    dataDir,
    priced,
    env,
    config,
    async restart() {
      const code = await stopChild(stack.serve, 40000);
      stack.serve = await launch();
      return code;
    },
    async stop() {
      const code = await stopChild(stack.serve, 40000);
      await stopChild(fake);
      rmSync(dataDir, { recursive: true, force: true });
      return code;
    },
  };
  return stack;
}

// The test OpenID Connect provider (tests/oidc/provider.mjs, npm
// oidc-provider; its packages installed by scripts/npm_pinned.sh tests/oidc
// here when missing) on a free 127.0.0.1 port with a fresh RS256 key and one
// client; users alice/bob/carol/dave (password = name; groups eng-platform,
// platform-approvers, platform-viewers, other-team). Resolves once it prints
// READY: {issuer, port, clientId, clientSecret, child, stop()}.
export async function startOidcProvider({ name, redirectUri, postLogoutRedirectUri, clientId = 'maestro', clientSecret = 'e2e-oidc-secret' }) {
  const dir = join(REPO, 'tests', 'oidc');
  if (!existsSync(join(dir, 'node_modules', 'oidc-provider'))) {
    const r = spawnSync(join(REPO, 'scripts', 'npm_pinned.sh'), ['tests/oidc'], { cwd: REPO, encoding: 'utf8', timeout: 300000 });
    if (r.status !== 0) throw new Error(`scripts/npm_pinned.sh tests/oidc failed: ${r.stdout}${r.stderr}`);
  }
  const keysDir = mkdtempSync(join(tmpdir(), `maestro-e2e-${name}-oidc-`));
  const keys = join(keysDir, 'keys.json');
  const made = spawnSync(process.execPath, [join(dir, 'provider.mjs'), '--make-keys', keys], { encoding: 'utf8', timeout: 60000 });
  if (made.status !== 0) throw new Error(`provider.mjs --make-keys failed: ${made.stderr}`);
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const args = [join(dir, 'provider.mjs'), '--port', String(port), '--issuer', issuer, '--keys', keys, '--client-id', clientId,
    '--client-secret', clientSecret, '--redirect-uri', redirectUri];
  if (postLogoutRedirectUri) args.push('--post-logout-redirect-uri', postLogoutRedirectUri);
  const child = start(process.execPath, args, {}, `${name}-oidc-provider.log`);
  await firstLine(child, 'READY ', 30000);
  return {
    issuer,
    port,
    clientId,
    clientSecret,
    child,
    async stop() {
      await stopChild(child);
      rmSync(keysDir, { recursive: true, force: true });
    },
  };
}

// A REST call with the admin token (setup and checks beside the page).
export async function apiCall(stack, path, init = {}) {
  const res = await fetch(`${stack.base}${path}`, {
    ...init,
    headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json', ...(init.headers ?? {}) },
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : {} };
}

export async function launchBrowser() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_BIN ?? '/usr/bin/chromium',
    args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
}

// Screenshots are numbered in step order per stack: <stack name>-NN-<name>.png.
let shot = 0;
let suite = 'e2e';
export async function screenshot(page, name) {
  mkdirSync(ARTIFACTS, { recursive: true });
  shot += 1;
  await page.screenshot({ path: join(ARTIFACTS, `${suite}-${String(shot).padStart(2, '0')}-${name}.png`), fullPage: true });
}
